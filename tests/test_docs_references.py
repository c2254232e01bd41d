"""Docs that cannot go stale: every file, module and command the docs name exists.

README.md, docs/*.md and cypher/README.md name modules, files and ``guidedrag`` commands in
backticks; a rename used to leave them pointing at nothing (README's layout named four modules
that had moved under ``steering/``). Each name is checked against the tree, the import system
and the CLI itself, so the next rename fails here instead of misleading a reader.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import shlex
import subprocess
from pathlib import Path, PurePath

import click
import pytest

from guidedrag_graph.cli import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "cypher" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
_EXTENSIONS = ("py", "md", "cypher", "sh", "json", "toml", "java", "xml", "txt", "jsonl")
_FILE = re.compile(r"(?<![\w./-])[\w./-]+\.(?:" + "|".join(_EXTENSIONS) + r")(?![\w])")
_MODULE = re.compile(r"guidedrag_graph(?:\.\w+)+")
# Files that the tools write (a report, an eval's results, a bundle a user makes) or that a
# user names: the docs describe them; the tree need not hold one.
WRITTEN_BY_THE_TOOLS = {
    "report.md", "results.json", "summary.json", "bundle.json", "CREDITS.md",
    "compiled.cypher", "r.cypher", "policy.json", "mapping.toml", "schema.toml", "my-kg.toml",
    "entities.jsonl",
}  # fmt: skip


def _tracked() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return out.split()


TRACKED = _tracked()
BASENAMES = {PurePath(t).name for t in TRACKED}


def spans(doc: Path) -> list[str]:
    """Inline code spans outside fenced blocks, and each line of the fenced blocks."""
    text = doc.read_text(encoding="utf-8")
    fenced = [line for block in _FENCE.findall(text) for line in block.splitlines()]
    prose = _FENCE.sub("", text)
    return [m.group(1).strip() for m in _SPAN.finditer(prose)] + fenced


def file_problem(doc: Path, name: str) -> str | None:
    if "..." in name or name.startswith("/"):
        return None  # a pattern ("..._synthetic-100k.json") or a path on the server's machine
    if "/" not in name and name.count(".") > 1:
        return None  # an attribute (``prep.compiled.cypher``) or a setting (``internal.dbms…``)
    if "/" not in name:
        if name in BASENAMES or name in WRITTEN_BY_THE_TOOLS:
            return None
        return f"{doc.name}: `{name}` is no file of the tree"
    for base in (ROOT, doc.parent, ROOT / "guidedrag_graph"):
        if (base / name).exists():
            return None
    return f"{doc.name}: `{name}` does not exist"


def module_problem(doc: Path, dotted: str) -> str | None:
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            found = importlib.util.find_spec(".".join(parts[:n])) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            break
    else:
        return f"{doc.name}: `{dotted}` imports nothing"
    obj: object = importlib.import_module(".".join(parts[:n]))
    for attr in parts[n:]:
        if not hasattr(obj, attr):
            return f"{doc.name}: `{dotted}`: {'.'.join(parts[:n])} has no {attr!r}"
        obj = getattr(obj, attr)
    return None


def command_problem(doc: Path, line: str) -> str | None:
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        words = line.split()
    if not words or words[0] != "guidedrag":
        return None
    command: click.Command = cli
    path = ["guidedrag"]
    for word in words[1:]:
        if not isinstance(command, click.Group) or word.startswith("-") or word == "…":
            break
        # ``retrieve/ask`` and ``start|status`` name two commands: each must exist
        alternatives = re.split(r"[/|]", word)
        subs = [command.get_command(click.Context(command), w) for w in alternatives]
        found = [sub for sub in subs if sub is not None]
        if len(found) < len(subs):
            return f"{doc.name}: `{' '.join([*path, word])}` is no command"
        if len(found) > 1:
            break
        command, path = found[0], [*path, word]
    return None


def problems(doc: Path) -> list[str]:
    out: list[str | None] = []
    for span in spans(doc):
        command = re.sub(r"^(?:[A-Z_]+=\S*\s+)+", "", span.strip())  # VAR=x guidedrag ...
        out.append(command_problem(doc, command))
        for name in _FILE.findall(span):
            if not name.startswith(("http", "www.")) and "://" not in span:
                out.append(file_problem(doc, name))
        out += [module_problem(doc, m) for m in _MODULE.findall(span)]
    return [p for p in out if p]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_module_and_command_named_exists(doc: Path) -> None:
    assert problems(doc) == []


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    """Each kind of stale name is caught (so a passing run above means something)."""
    doc = tmp_path / "stale.md"
    doc.write_text(
        "Layout: `planning.py`, `guidedrag_graph/tiers.py`, `guidedrag_graph.steering.nope`,\n"
        "`guidedrag_graph.retrieval.paths.Paths.nope`. Run `guidedrag kb explode` or\n\n"
        "```bash\nguidedrag frobnicate --yes\n```\n"
        "These exist: `steering/tiers.py`, `guidedrag_graph.retrieval.paths.Paths.variant`, "
        "`guidedrag kb wipe --yes`, `cypher/kb_wipe.cypher`.\n",
        encoding="utf-8",
    )
    found = problems(doc)
    for stale in ("planning.py", "guidedrag_graph/tiers.py", "steering.nope", "Paths.nope",
                  "guidedrag kb explode", "guidedrag frobnicate"):  # fmt: skip
        assert any(stale in p for p in found), (stale, found)
    assert len(found) == 6, found


def test_no_install_line_claims_a_published_package() -> None:
    """``pip install guidedrag-graph`` fails: nothing is published; the docs install from the
    checkout (or a wheel built from it)."""
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        assert not re.search(r"pip install ['\"]?guidedrag-graph", text), doc.name


def test_the_module_map_names_every_module_at_the_package_root() -> None:
    """docs/architecture.md's layer table is the map of the package: a new root module (four
    were missing from it) must say where it sits."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    root = sorted(p.name for p in (ROOT / "guidedrag_graph").glob("*.py") if p.stem != "__init__")
    assert [name for name in root if f"`{name}`" not in text] == []
