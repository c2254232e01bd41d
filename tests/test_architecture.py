"""The package's shape: the paper's stages import only downwards (issue 9).

Data flows one way — configuration → selection → steering → retrieval → augmentation →
generation → pipeline — and the tools around the stages (KB loading, taggers, evaluation, the
CLI) sit above them. A module may import its own layer or lower ones, never a higher one, lazy
imports inside functions included: that is what lets a stage be replaced or tested on its own.
No Neo4j needed.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "guidedrag_graph"

# Module (or package prefix) -> layer. The longest matching prefix decides.
LAYERS: dict[str, int] = {
    # 0 configuration: settings, vocabularies, the schema mapping, the driver, the renderer
    "errors": 0,
    "vocabulary": 0,
    "config": 0,
    "env_check": 0,
    "resources": 0,
    "db": 0,
    "schema": 0,
    "templates": 0,
    "template_lexer": 0,
    "semantics": 0,
    "context": 0,
    "embeddings": 0,
    "retrieve_args": 0,
    "kb.inspect": 0,  # what a graph holds, read against the schema mapping (no KB writes)
    # 1 selection: the algebra, compiled to one Cypher query
    "selection": 1,
    # 2 steering: Table 2, the policy, auto's tiers
    "planning": 2,
    "tiers": 2,
    "steering": 2,
    "boosting": 2,
    "linking": 2,  # semantics from the question (auto links a bare question's entities)
    # 3 retrieval: ranking inside Neo4j
    "retrieval": 3,
    # 4 augmentation, 5 generation, 6 the pipeline that runs them
    "augmentation": 4,
    "generation": 5,
    "pipeline": 6,
    # 7 around the stages: KB loading, migrations, the managed server, taggers
    "migrate": 7,
    "runtime": 7,
    "kb": 7,
    "tagging": 7,
    # 8 tools built on the pipeline, 9 the CLI on top of everything
    "calibration": 8,
    "evaluation": 8,
    "integrations": 8,
    "cli": 9,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def imports(path: Path) -> set[str]:
    """Every ``guidedrag_graph`` module ``path`` imports, at any depth (lazy imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "guidedrag_graph":
                found.update(alias.name for alias in node.names)
            elif node.module.startswith("guidedrag_graph."):
                found.add(node.module.removeprefix("guidedrag_graph."))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("guidedrag_graph."):
                    found.add(alias.name.removeprefix("guidedrag_graph."))
    return found


def test_every_module_has_a_layer() -> None:
    missing = []
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        if name and not any(name == p or name.startswith(p + ".") for p in LAYERS):
            missing.append(name)
    assert not missing, f"give these modules a layer in LAYERS: {missing}"


def test_no_import_from_a_lower_stage_to_a_higher_one() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        if not name:
            continue
        for target in sorted(imports(path)):
            if layer(target) > layer(name):
                upward.append(f"{name} (layer {layer(name)}) imports {target} ({layer(target)})")
    assert not upward, "imports against the flow of the stages:\n" + "\n".join(upward)


def test_the_checker_sees_lazy_and_upward_imports(tmp_path: Path) -> None:
    """The check itself can fail: a lazy import of a higher layer is found."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from guidedrag_graph.pipeline import GuidedRAG\n")
    assert imports(probe) == {"pipeline"}
    assert layer("pipeline") > layer("selection.selector")
