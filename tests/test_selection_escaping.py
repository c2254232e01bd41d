"""Identifiers are escaped exactly once, at the end (issue 10, D7).

Property: for every identifier-carrying ``SchemaMapping`` field and the vector index setting, any
string either is refused with a library error or lands inside exactly one pair of backticks, in
every rendered template and compiled selection. Checked structurally: the rendering with the
hostile name, with each backtick identifier that decodes to it swapped for a plain placeholder,
must equal the rendering with the placeholder itself. So the hostile text can neither leave its
identifier nor change anything around it (no cut comment, no re-renamed property).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from pydantic import ValidationError

from guidedrag_graph.errors import GuidedRAGError
from guidedrag_graph.identifiers import escape_identifier, identifier_problem
from guidedrag_graph.migration.run import discover
from guidedrag_graph.resources import cypher_dir, cypher_template
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import boost, parse
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.templates import queries as T
from tests.template_scripts import variants_of
from tests.test_selection_compile import identity_resolution

PLACEHOLDER = "Zq9placeholder"
FIELDS = sorted(
    name
    for name, info in SchemaMapping.model_fields.items()
    if info.annotation in (str, "str", str | None, "str | None")
    and name not in ("preset", "relation_mode", "mentions_direction")
)
# A "hostile" value equal to another identifier's name is indistinguishable from it in the text,
# so such collisions are skipped (they are ordinary names, not escapes).
ORDINARY = {str(getattr(SchemaMapping(), f)) for f in FIELDS} | {PLACEHOLDER}
ORDINARY |= set(T.NAME_DEFAULTS.values())
ORDINARY |= {"R", "S"}  # the relation types of EXPRESSIONS
TEMPLATES = sorted(p.stem for p in cypher_dir().glob("*.cypher"))
EXPRESSIONS = [
    parse(
        "entity('a') & hop('a', ['R', 'S'], depth=2, direction='out') | khop('a', 2) "
        "| near('a') - type('T') ^ category('c') | document('d') | source('s') "
        "| date(2000, 2001) | chunks('c1') | entity(['x', 'y']) | all()"
    ),
    boost((parse("entity('a') | entity('b')"), 0.2), (parse("hop('a', 'R')"), 0.1)),
]
HOSTILE = [
    "x:Chunk` RETURN 1 AS id //",
    "zz\n//",
    "Chunk c.text",
    "`",
    "``",
    "a`b``c",
    "c.id",
    "e.name",
    "// comment",
    ":param x => 1",
    "\x00",
    "\x00REL_TYPES\x00",
    "$sel_0_ids",
    "s0",
    "MENTIONS",
    "Chunk",
    "}) DETACH DELETE n //",
    "Ω\u2028\r\n",
    "Chunk\\u0060) RETURN 'INJECTED' AS x //",  # Neo4j decodes \uXXXX in backticks (issue 22)
    "a\\b",
    "\\U00000060",
]
# What Neo4j does to a backtick-quoted name before it uses it: \uXXXX escapes are decoded.
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def lex_identifiers(text: str, hostile: str) -> str:
    """``text`` with every backtick identifier whose name is ``hostile`` replaced by the
    placeholder's identifier; raises if a backtick identifier is left open."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "`":
            out.append(ch)
            i += 1
            continue
        j = i + 1
        name: list[str] = []
        while True:
            if j >= n:
                raise AssertionError(f"unterminated identifier at {i}: {text[i : i + 40]!r}")
            if text[j] == "`":
                if j + 1 < n and text[j + 1] == "`":
                    name.append("`")
                    j += 2
                    continue
                break
            name.append(text[j])
            j += 1
        decoded = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), "".join(name))
        out.append(f"`{PLACEHOLDER}`" if decoded == hostile else text[i : j + 1])
        i = j + 1
    return "".join(out)


def renderings(schema: SchemaMapping, index_name: str) -> list[str]:
    """Every template, fragment and migration rendered with every slot filled (each index and
    constraint name set to ``index_name``), and every compiled selection."""
    names = dict.fromkeys(T.NAME_DEFAULTS, index_name)
    relation = T.Relation(("R", "S"), "out")
    lists = {
        "tiers": ["s0", "s1"],
        "sizes": ["s0", "s1"],
        "flags": ["t0", "t1"],
        "members": ["m0", "m1"],
        "operands": ["o0", "o1"],
    }
    out: list[str] = []
    for name in TEMPLATES:
        if name == "load_next_chunk" and schema.next_chunk_type is None:
            continue  # the loader renders it only for mappings with a next-chunk type
        for variant in variants_of(name):  # every variant's lines are rendered somewhere
            out.append(
                T.query(name, schema, names=names, lists=lists, relation=relation, variant=variant)
            )
            for part in re.findall(r"^// @fragment (\w+)", cypher_template(name), re.M):
                out.append(
                    T.fragment(
                        name,
                        part,
                        schema,
                        names=names,
                        lists=lists,
                        relation=relation,
                        steps=2,
                        variant=variant,
                    )
                )
    for migration in discover():
        out += migration.statements(schema, names)
    for expr in EXPRESSIONS:
        plan = compile_plan(expr, identity_resolution(expr), schema, hop_cap=10)
        compiled = plan.selection(schema)
        out += [compiled.cypher, compiled.prelude, compiled.boosted]
        for template in ("retrieve_exact", "selection_members", "selection_size"):
            out.append(T.query(template, schema, selection=compiled.cypher))
    return out


def assert_contained(
    make: Callable[[str], tuple[SchemaMapping, str]], hostile: str, *, refused: bool
) -> None:
    """Render everything with ``hostile`` in one slot and check it stayed one identifier.

    ``refused`` says whether the name must be refused instead (a library error, or the
    mapping's own validation): a name that should render but is refused fails, and so does one
    that should be refused but renders, so the check cannot pass by refusing everything."""
    try:
        schema, index_name = make(hostile)
        got = renderings(schema, index_name)
    except (GuidedRAGError, ValidationError):
        assert refused, f"{hostile!r} was refused, but it is a name a person may write"
        return
    assert not refused, f"{hostile!r} rendered, but it must be refused"
    schema, index_name = make(PLACEHOLDER)
    want = renderings(schema, index_name)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert lex_identifiers(g, hostile) == w


def _field(name: str) -> Callable[[str], tuple[SchemaMapping, str]]:
    return lambda value: (SchemaMapping(**{name: value}), "chunk_embedding")


def test_there_are_fields_and_templates() -> None:
    assert {"chunk_label", "chunk_id", "mentions_type", "entity_key"} <= set(FIELDS)
    assert len(TEMPLATES) >= 30


def _unquotable(name: str) -> bool:
    """Names no quoting can carry (NUL, lone surrogates): refused wherever they come from."""
    try:
        escape_identifier(name)
    except GuidedRAGError:
        return True
    return False


def _unwritable(name: str) -> bool:
    """Names a mapping refuses (``SchemaMapping._names_are_usable``): blank, or with a
    character ``identifier_problem`` names."""
    return not name.strip() or identifier_problem(name) is not None


@pytest.mark.parametrize("field", FIELDS)
def test_hand_written_hostile_identifiers(field: str) -> None:
    rendered = 0
    for hostile in HOSTILE:
        if hostile not in ORDINARY:
            refused = _unwritable(hostile)
            assert_contained(_field(field), hostile, refused=refused)
            rendered += not refused
    assert rendered >= 10  # most hostile names are writable: they must render, contained


def test_vector_index_name_setting() -> None:
    rendered = 0
    for hostile in HOSTILE:
        if hostile not in ORDINARY:
            refused = _unquotable(hostile)
            assert_contained(lambda v: (SchemaMapping(), v), hostile, refused=refused)
            rendered += not refused
    assert rendered >= 10


@pytest.mark.parametrize("field", FIELDS)
@hsettings(max_examples=15, deadline=None)
@given(hostile=st.text(min_size=1, max_size=12))
@example(hostile="\ud800")
def test_any_identifier_is_contained(field: str, hostile: str) -> None:
    if hostile in ORDINARY or hostile == T.ELEMENT_ID:
        return
    assert_contained(_field(field), hostile, refused=_unwritable(hostile))


def test_reproducers_render_as_single_identifiers() -> None:
    schema = SchemaMapping(chunk_label="Chunk c.text")
    compiled = compile_plan(
        parse("entity('a')"), identity_resolution(parse("entity('a')")), schema, hop_cap=1
    )
    assert "(c:`Chunk c.text`)" in compiled.selection(schema).cypher
    text = T.query("retrieve_search", SchemaMapping(), names={"vector_index": "zz\n//"})
    assert "`zz\n//`" in text
    with pytest.raises(GuidedRAGError, match="lone surrogate"):
        T.query("selection_size", SchemaMapping.model_construct(chunk_label="\udcff"))


def test_element_id_mapping() -> None:
    schema = SchemaMapping(chunk_id="elementId()", entity_id="elementId()")
    expr = parse("entity('a') | chunks('c1')")
    cypher = (
        compile_plan(expr, identity_resolution(expr), schema, hop_cap=1).selection(schema).cypher
    )
    assert "WHERE elementId(e) IN $sel_" in cypher
    assert "elementId(c) IN $sel_" in cypher
    assert "`elementId()`" not in cypher
    assert T.fragment("selection_given", "ids", schema).endswith("elementId(c) IN $sel_chunk_ids")
    assert "c.`text` AS text" in T.query("selection_chunks", schema, selection="MATCH (c)")
    # only id fields have the special meaning; the mapping refuses it elsewhere
    with pytest.raises(ValidationError, match="only document_id, chunk_id, entity_id"):
        SchemaMapping(chunk_text="elementId()")
