"""The package's shape: the paper's stages import only downwards, and nothing imports in a circle.

The contracts are import-linter's, declared in ``pyproject.toml`` (``[tool.importlinter]``) and
run by CI as ``lint-imports``; these tests run the same contracts, check that every module is
placed in a layer (a new top-level module cannot slip past the layers), that the checker can
fail, and that no module grows past the size a reader takes in at once. No Neo4j needed.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "guidedrag_graph"
MAX_LINES = 400
_LINT = "from importlinter.cli import lint_imports_command as c; c()"


def _lint_imports(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _LINT, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


def test_the_import_contracts_are_kept() -> None:
    run = _lint_imports(ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "BROKEN" not in run.stdout and run.stdout.count("KEPT") == len(_contracts())


def test_every_top_level_module_has_a_layer() -> None:
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    assert isinstance(layers, list)
    named = {
        part.strip().removeprefix("guidedrag_graph.")
        for line in layers
        for part in str(line).replace(":", "|").split("|")
    }
    top = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    missing = sorted(top - named)
    assert not missing, f"name these modules in pyproject's layers contract: {missing}"


def test_the_checker_finds_a_cycle_and_an_upward_import(tmp_path: Path) -> None:
    """The contracts can fail: a two-module circle and a lazy upward import are both reported."""
    pkg = tmp_path / "probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from probe import high\n")  # lazy, upward
    (pkg / "high.py").write_text("from probe import low\n")
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = probe\n\n"
        "[importlinter:contract:layers]\nname = layers\ntype = layers\n"
        "layers =\n    probe.high\n    probe.low\n\n"
        "[importlinter:contract:cycles]\nname = cycles\ntype = acyclic_siblings\n"
        "ancestors =\n    probe\n"
    )
    run = _lint_imports(tmp_path, "--config", ".importlinter")
    assert run.returncode != 0
    assert "Contracts: 0 kept, 2 broken." in run.stdout, run.stdout[-2000:]


def test_no_module_is_longer_than_a_reader_takes_in() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text("utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"split these modules (over {MAX_LINES} lines): {long}"


# The package's root holds the few modules every stage shares; everything else sits in the
# package of its stage (linking/, templates/, schema/, db/, migration/, ...). Issue 37.
MAX_ROOT_MODULES = 15


def test_the_package_root_holds_at_most_fifteen_modules() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, f"move some into a stage's package: {root}"


def _one_letter_apart(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one letter changed, added or removed (``boost``/``boosts``)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def test_no_two_module_names_differ_by_one_letter() -> None:
    """A reader who greps ``boost`` must not land in ``boosts`` (issue 37's trap names)."""
    names = sorted({p.stem for p in PACKAGE.rglob("*.py") if p.stem != "__init__"})
    traps = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if _one_letter_apart(a, b)]
    assert not traps, f"rename one of each pair: {traps}"
    assert _one_letter_apart("boost", "boosts") and _one_letter_apart("reader", "render")
    assert not _one_letter_apart("linked", "linking")
