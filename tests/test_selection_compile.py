"""Golden fixtures: an expression compiles to exactly this Cypher and these parameters.

Each ``tests/fixtures/compile/<case>.cypher`` starts with ``// expr: <DSL>``, ``// schema:
<name>`` and ``// params: <JSON>`` lines, followed by the expected fragment. Names resolve to
themselves here (entity id = name_key(name), types and documents as written), so no database is
needed. Regenerate after an intended change with ``GUIDEDRAG_UPDATE_GOLDEN=1 pytest ...`` and
review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from guidedrag_graph.schema.presets import PRESETS, SchemaMapping, name_key, relation_type_name
from guidedrag_graph.selection import Expr, parse
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.compiler import CompiledSelection, compile_plan
from guidedrag_graph.selection.primitives import Resolved

FIXTURES = Path(__file__).parent / "fixtures" / "compile"
SCHEMAS: dict[str, SchemaMapping] = {
    "guidedrag": PRESETS["guidedrag"],
    "guidedrag-property": PRESETS["guidedrag"].model_copy(update={"relation_mode": "property"}),
    "neo4j-graphrag": PRESETS["neo4j-graphrag"],
}
HOP_CAP = 1000


def identity_resolution(expr: Expr) -> dict[Expr, Resolved]:
    out: dict[Expr, Resolved] = {}
    for leaf in expr.leaves():
        if isinstance(leaf, A.Hop):
            types = tuple(sorted({relation_type_name(t) for t in leaf.types}))
            out[leaf] = Resolved(ids=(name_key(leaf.name),), types=types)
        elif isinstance(leaf, (A.Entity, A.KHop, A.Near)):
            out[leaf] = Resolved(ids=(name_key(leaf.name),), empty=leaf.name == "Atlantis")
        elif isinstance(leaf, A.Entities):
            known = [name_key(n) for n in leaf.names if n != "Atlantis"]
            out[leaf] = Resolved(ids=tuple(known), empty=not known)
        elif isinstance(leaf, A.Document):
            out[leaf] = Resolved(ids=(leaf.name,))
    return out


def compile_case(text: str, schema_name: str) -> CompiledSelection:
    expr = parse(text)
    schema = SCHEMAS[schema_name]
    plan = compile_plan(expr, identity_resolution(expr), schema, hop_cap=HOP_CAP)
    return plan.selection(schema)


def read_case(path: Path) -> tuple[str, str, dict[str, object], str]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = {}
    for line in lines[:3]:
        match = re.match(r"// (expr|schema|params): (.*)$", line.rstrip("\n"))
        assert match, f"{path.name}: header line {line!r}"
        header[match.group(1)] = match.group(2)
    return header["expr"], header["schema"], json.loads(header["params"]), "".join(lines[3:])


CASES = sorted(FIXTURES.glob("*.cypher"))


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 12


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_compiles_to_golden(path: Path) -> None:
    text, schema_name, params, cypher = read_case(path)
    compiled = compile_case(text, schema_name)
    if os.environ.get("GUIDEDRAG_UPDATE_GOLDEN"):
        path.write_text(
            f"// expr: {text}\n// schema: {schema_name}\n"
            f"// params: {json.dumps(compiled.params, sort_keys=True, ensure_ascii=False)}\n"
            + compiled.cypher,
            encoding="utf-8",
        )
        return
    assert compiled.cypher == cypher
    assert compiled.params == params
    assert all(name.startswith("sel_") for name in compiled.params)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_no_value_is_spliced(path: Path) -> None:
    """Every entity name, document, source and date reaches Cypher only as a parameter."""
    text, schema_name, _, _ = read_case(path)
    compiled = compile_case(text, schema_name)
    for leaf in parse(text).leaves():
        for value in vars(leaf).values():
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                if isinstance(v, str) and len(v) > 3 and not re.fullmatch(r"[A-Z_]+", v):
                    assert v not in compiled.cypher, (v, compiled.cypher)
