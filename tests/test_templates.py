"""The template renderer: the lexer, each slot kind, the markers, and its refusals (no Neo4j)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.resources import cypher_dir, cypher_template
from guidedrag_graph.schema import presets as schema_module
from guidedrag_graph.schema.presets import PRESETS, SchemaMapping
from guidedrag_graph.templates import lexer as L
from guidedrag_graph.templates import queries as T

DEFAULT = PRESETS["guidedrag"]
GRAPHRAG = PRESETS["neo4j-graphrag"]
BUILDER = PRESETS["neo4j-graphrag-builder"]


def render(text: str, schema: SchemaMapping | None = DEFAULT, **kwargs: object) -> str:
    return T.render(T.parse(text, "t.cypher"), schema, **kwargs)  # type: ignore[arg-type]


# --- lexer -----------------------------------------------------------------------------------
def test_browser_only_lines_are_dropped_and_code_lines_kept_as_written() -> None:
    text = "// why\n:param x => 1;\n\nMATCH (n)  // trailing comment stays\n  RETURN n /* note */\n"
    assert render(text) == "MATCH (n)  // trailing comment stays\n  RETURN n /* note */"


def test_renaming_touches_identifiers_and_parameters_only() -> None:
    text = (
        "WITH s, 's' AS q, \"s $sel_ids\" AS r, `s` AS u, x.s AS v, $sel_ids AS w // s\n"
        "RETURN [x IN s | x] AS s, $sel_ids_more"
    )
    out = render(text, variables={"s": "s3"}, params={"sel_ids": "sel_3_ids"})
    assert out == (
        "WITH s3, 's' AS q, \"s $sel_ids\" AS r, `s` AS u, x.s AS v, $sel_3_ids AS w // s\n"
        "RETURN [x IN s3 | x] AS s3, $sel_ids_more"
    )


def test_renaming_leaves_map_keys_alone() -> None:
    text = (
        "WITH {s: s, t: [s]} AS m, collect({c: c, score: s}) AS top, c {.id, s: s.x} AS p\n"
        "CALL () {\n  WITH s, t\n  RETURN s\n}\n"
        "MATCH (c:/*chunk_label*/Chunk {/*chunk_id*/id: s})\n"
        "RETURN CASE WHEN s THEN 1 ELSE 2 END AS s"
    )
    out = render(text, variables={"s": "s3", "c": "c1", "t": "t3"})
    assert out == (
        "WITH {s: s3, t: [s3]} AS m, collect({c: c1, score: s3}) AS top, c1 {.id, s: s3.x} AS p\n"
        "CALL () {\n  WITH s3, t3\n  RETURN s3\n}\n"
        "MATCH (c1:`Chunk` {`id`: s3})\n"
        "RETURN CASE WHEN s3 THEN 1 ELSE 2 END AS s3"
    )


def test_strings_with_escapes_and_comment_like_text() -> None:
    text = "RETURN 'it\\'s // not a comment', \"a \\\" /*chunk_label*/b\", `x // y`"
    assert render(text) == text  # nothing inside a string or backticks is a comment or a slot


@pytest.mark.parametrize("text", ["RETURN 'open", 'RETURN "open', "RETURN `open", "/* open"])
def test_unterminated_tokens_are_errors_naming_the_line(text: str) -> None:
    with pytest.raises(ConfigurationError, match=r"t\.cypher:2: unterminated"):
        render("// x\n" + text)


# --- slot kinds ------------------------------------------------------------------------------
def test_label_slots_with_bare_or_backticked_defaults() -> None:
    text = "MATCH (c:/*chunk_label*/Chunk), (e:/*entity_label*/`Entity`)"
    assert render(text, GRAPHRAG) == "MATCH (c:`Chunk`), (e:`__Entity__`)"


@pytest.mark.parametrize(
    ("hostile", "escaped"),
    [
        ("a`b", "`a``b`"),
        ("``", "``````"),
        ("x // y", "`x // y`"),
        ("x\n//", "`x\n//`"),
        ("Chunk c.text", "`Chunk c.text`"),
        ("}) DETACH DELETE n //", "`}) DETACH DELETE n //`"),
        ("Chunk\\u0060) RETURN 1 //", "`Chunk\\u005cu0060) RETURN 1 //`"),  # issue 22
        ("a\\b", "`a\\u005cb`"),
    ],
)
def test_hostile_names_land_in_one_pair_of_backticks(hostile: str, escaped: str) -> None:
    # model_construct: the names a database holds skip the read-time check of mapping files
    schema = SchemaMapping.model_construct(chunk_label=hostile, chunk_id=hostile)
    out = render("MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id = 1", schema)
    assert out == f"MATCH (c:{escaped}) WHERE c.{escaped} = 1"


def test_lone_surrogates_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="lone surrogate"):
        render(
            "MATCH (c:/*chunk_label*/Chunk)", SchemaMapping.model_construct(chunk_label="\udcff")
        )
    with pytest.raises(ConfigurationError, match="lone surrogate"):
        render("DROP INDEX /*vector_index*/chunk_embedding", names={"vector_index": "\ud800"})


def test_property_slots_access_key_and_element_id_forms() -> None:
    text = "MATCH (c {/*chunk_id*/id: 1}) RETURN /*chunk_id*/c.id, /*chunk_text*/c.`text`"
    assert render(text, GRAPHRAG) == "MATCH (c {`id`: 1}) RETURN c.`id`, c.`text`"
    assert render("RETURN /*chunk_id*/c.id", BUILDER) == "RETURN elementId(c)"
    with pytest.raises(ConfigurationError, match="no property key"):
        render("MATCH (c {/*chunk_id*/id: 1})", BUILDER)


def test_property_slot_variable_is_renamed() -> None:
    assert render("RETURN /*chunk_id*/s.id", variables={"s": "s2"}) == "RETURN s2.`id`"


def test_name_slots_take_the_callers_names() -> None:
    text = "CREATE VECTOR INDEX /*vector_index*/`chunk_embedding` IF NOT EXISTS"
    out = render(text, names={"vector_index": "my`index"})
    assert out == "CREATE VECTOR INDEX `my``index` IF NOT EXISTS"
    with pytest.raises(ConfigurationError, match=r"t\.cypher:1: slot /\*vector_index\*/ needs"):
        render(text)


def test_relationship_slots_follow_the_mapping() -> None:
    text = "MATCH (c)/*mentions*/-[:MENTIONS]->(e), (c)/*part_of*/-[:`PART_OF`]->(d)"
    assert render(text) == "MATCH (c)-[:`MENTIONS`]->(e), (c)-[:`PART_OF`]->(d)"
    assert render(text, GRAPHRAG) == "MATCH (c)<-[:`FROM_CHUNK`]-(e), (c)-[:`FROM_DOCUMENT`]->(d)"
    own_document = PRESETS["langchain"]
    assert render(text, own_document) == "MATCH (c)-[:`MENTIONS`]->(e), (c)-[*0..0]->(d)"
    inward = SchemaMapping(part_of_type="HAS_PART", part_of_direction="in")
    assert render("(c)/*part_of*/-[:PART_OF]->(d)", inward) == "(c)<-[:`HAS_PART`]-(d)"


def test_next_chunk_slot_needs_the_type() -> None:
    text = "MERGE (a)/*next_chunk*/-[:NEXT_CHUNK]->(b)"
    assert render(text, GRAPHRAG) == "MERGE (a)-[:`NEXT_CHUNK`]->(b)"
    with pytest.raises(ConfigurationError, match="next_chunk_type is not set"):
        render(text)


def test_relation_slot_types_direction_and_property_mode() -> None:
    text = "MATCH (x)/*relation*/-[r:IS_CURRENCY_OF]-(y) WHERE /*relation_type*/type(r) IN $t"
    both = T.Relation(("A", "B`C"), "both")
    assert render(text, relation=both) == "MATCH (x)-[r:`A`|`B``C`]-(y) WHERE type(r) IN $t"
    out = render(text, relation=T.Relation(("A",), "in"), variables={"r": "r1"})
    assert out == "MATCH (x)<-[r1:`A`]-(y) WHERE type(r1) IN $t"
    prop = DEFAULT.model_copy(update={"relation_mode": "property"})
    out = render(text, prop, relation=T.Relation(("A",), "out"))
    assert out == "MATCH (x)-[r:`RELATED_TO`]->(y) WHERE r.`type` IN $t"
    with pytest.raises(ConfigurationError, match="needs relation="):
        render(text)
    with pytest.raises(ConfigurationError, match="at least one"):
        render(text, relation=T.Relation((), "out"))
    with pytest.raises(ConfigurationError, match="direction 'up'"):
        render(text, relation=T.Relation(("A",), "up"))


def test_list_slots_repeat_their_first_element() -> None:
    text = "RETURN /*sizes*/[size(s)] AS sizes, /*flags*/[t] AS t, /*tiers*/[s0, s1][0] AS c"
    lists = {"sizes": ["s1", "s4"], "flags": ["t1", "t4"], "tiers": ["s4"]}
    out = render(text, lists=lists)
    assert out == "RETURN [size(s1), size(s4)] AS sizes, [t1, t4] AS t, [s4][0] AS c"
    with pytest.raises(ConfigurationError, match="not a variable name"):
        render(text, lists={**lists, "tiers": ["s0] + [x"]})
    with pytest.raises(ConfigurationError, match="needs lists="):
        render(text, lists={"sizes": ["s1"]})


# --- refusals at parse time --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("MATCH (c:/*chunk_lable*/Chunk)", r"t\.cypher:2: unknown slot /\*chunk_lable\*/"),
        ("MATCH (c:/*chunk_label*/Chnk)", r"t\.cypher:2: .*'Chnk', but its default is 'Chunk'"),
        ("RETURN /*chunk_id*/c.key", r"'key', but its default is 'id'"),
        ("MATCH (c)/*mentions*/-[:PART_OF]->(d)", r"'PART_OF', but its default is 'MENTIONS'"),
        ("MATCH (c:/*chunk_label*/ Chunk)", "is not followed by its default text"),
        ("MATCH (c)/*mentions*/(d)", r"must be followed by -\[:TYPE\]->"),
        # the arrow Browser runs must be the one the default schema renders
        (
            "MATCH (c)/*mentions*/<-[:MENTIONS]-(e)",
            r"<-\[:MENTIONS\]-, but the default .*-\[:MENTIONS\]->",
        ),
        ("MATCH (c)/*part_of*/-[:PART_OF]-(d)", r"followed by -\[:PART_OF\]-, but"),
        ("MATCH (c)/*mentions*/<-[:MENTIONS]->(e)", "has no direction"),
        ("MATCH (x)/*relation*/<-[r:IS_CURRENCY_OF]->(y)", "has no direction"),
        ("// @variant rank=plugin\nRETURN 1\n// @end-variant", "not declared"),
        ("// @variants rank=a|b\nRETURN 1", "has no '// @variant' block"),
        ("// @variants rank=a\n// @variant rank=a\n// @end-variant", "two or more"),
        ("// @variants rank=a|b\n// @variant rank=c\n// @end-variant", "not declared"),
        ("// @variant rank\n// @end-variant", "write '// @variant axis=a|b'"),
        ("// @include chunk_rows\n", "write '// @include <file> <fragment>'"),
        ("// @inclde chunk_rows rows\n", "unknown marker"),
        ("RETURN /*tiers*/[x + y, z]", "exactly one variable"),
        ("RETURN /*tiers*/[s0", "not closed"),
        ("CREATE INDEX /*vector_index*/other", "but its default is 'chunk_embedding'"),
    ],
)
def test_template_mistakes_are_errors_naming_file_and_line(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        render("// why\n" + text)


def test_ordinary_block_comments_need_spaces() -> None:
    assert render("RETURN 1 /* a note */") == "RETURN 1 /* a note */"


# --- markers --------------------------------------------------------------------------------
MARKED = """// why
:param sel_ids => ['a'];
MATCH (n)
// @fragment set
CALL () {
  // @step
  MATCH (x)-->(y)
  // @end-step
  RETURN $sel_ids AS s
}
// @end
// selection:begin
MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
RETURN c
"""


def test_fragments_steps_and_selection_splice() -> None:
    template = T.parse(MARKED, "m.cypher")
    fragment = T.render(template, DEFAULT, part="set", steps=3, params={"sel_ids": "sel_1_ids"})
    assert fragment == "CALL () {\n" + "  MATCH (x)-->(y)\n" * 3 + "  RETURN $sel_1_ids AS s\n}"
    whole = T.render(template, DEFAULT)
    assert whole.splitlines()[-2:] == [
        "MATCH (c:`Chunk`) WHERE c.`id` IN $sel_chunk_ids",
        "RETURN c",
    ]
    spliced = T.render(template, DEFAULT, selection="  MATCH (c:`X`)\n")
    assert spliced.splitlines()[-2:] == ["MATCH (c:`X`)", "RETURN c"]
    with pytest.raises(ConfigurationError, match="no '// @fragment rows'"):
        T.render(template, DEFAULT, part="rows")
    with pytest.raises(ConfigurationError, match="no `// selection:begin`"):
        render("RETURN 1", selection="MATCH (c)")


VARIANTS = """// why
// @variants rank=cypher|plugin u=a|b
:param x => 1;
// @variant rank=plugin
:param embedding_property => 'embedding';
// @end-variant
MATCH (c:/*chunk_label*/Chunk)
// @variant rank=cypher
WITH c, 1 AS score
// @end-variant
// @variant rank=plugin
CALL guidedrag.rank([c], $embedding_property, [1.0], 1) YIELD node, score
  // @variant u=b
  WITH node AS c, score
  // @end-variant
// @end-variant
// @fragment tail
// @variant u=a|b
RETURN c, score
// @end-variant
// @end
"""


def test_variant_blocks_are_kept_or_removed_by_name() -> None:
    template = T.parse(VARIANTS, "v.cypher")
    assert template.variants == {"rank": ("cypher", "plugin"), "u": ("a", "b")}
    assert T.render(template, DEFAULT).splitlines() == [
        "MATCH (c:`Chunk`)", "WITH c, 1 AS score", "RETURN c, score",
    ]  # fmt: skip
    plugin = T.render(template, DEFAULT, variant={"rank": "plugin", "u": "b"}).splitlines()
    assert plugin[1:] == [
        "CALL guidedrag.rank([c], $embedding_property, [1.0], 1) YIELD node, score",
        "  WITH node AS c, score",
        "RETURN c, score",
    ]
    assert T.render(template, DEFAULT, variant={"rank": "plugin"}).count("WITH node") == 0
    assert T.render(template, DEFAULT, part="tail", variant={"u": "b"}) == "RETURN c, score"
    with pytest.raises(ConfigurationError, match=r"no variant rank=java .*rank=cypher\|plugin"):
        T.render(template, DEFAULT, variant={"rank": "java"})
    with pytest.raises(ConfigurationError, match="no variant ranker=plugin"):
        T.render(template, DEFAULT, variant={"ranker": "plugin"})


def test_browser_scripts_of_variants_and_includes() -> None:
    script = T.browser_script("retrieve_exact", {"rank": "plugin"})
    assert ":param embedding_property => 'embedding';" in script
    assert "vector.similarity.cosine(/*" not in script and "@variant" not in script
    assert "guidedrag.rank(selected" in script
    assert "OPTIONAL MATCH (c)/*part_of*/-[:PART_OF]->(d:/*document_label*/Document)" in script
    assert "@include" not in script and "// selection:begin" in script
    default = T.browser_script("retrieve_exact")
    assert "$embedding_property" not in default and "vector.similarity.cosine(/*" in default
    assert T.browser_script("select_all") == cypher_template("select_all")
    # what the library runs is the script's query with its slots filled
    rendered = T.query("retrieve_exact", DEFAULT, variant={"rank": "plugin"})
    assert rendered.endswith("CASE WHEN $with_embedding THEN c.`embedding` END AS embedding")
    assert T.variants("retrieve_boost") == {
        "u_search": ("search", "index"), "rank_tiers": ("cypher", "plugin"),
        "scope": ("none", "index", "exact", "property"),
    }  # fmt: skip


def test_includes_must_name_a_plain_fragment() -> None:
    with pytest.raises(ConfigurationError, match=r"x\.cypher:2: .*names no fragment"):
        _check_includes("// x\n// @include chunk_rows nope\n")
    with pytest.raises(ConfigurationError, match="names no fragment"):
        _check_includes("// x\n// @include no_such_file rows\n")


def _check_includes(text: str) -> None:
    T.check_includes(T.parse(text, "x.cypher"))


@pytest.mark.parametrize(
    "text",
    [
        "// @fragment a\nRETURN 1\n",
        "// @end\n",
        "// @fragment a\n// @fragment b\n// @end\n// @end\n",
        "// @step\nRETURN 1\n",
        "// @fragment a\n// @step\n// @end\n// @end-step\n",
        "// @variants r=a|b\n// @variant r=a\nRETURN 1\n",
        "// @variants r=a|b\n// @fragment f\n// @variant r=a\n// @end\n// @end-variant\n",
    ],
)
def test_unbalanced_markers_are_errors(text: str) -> None:
    with pytest.raises(ConfigurationError, match=r"t\.cypher"):
        T.parse(text, "t.cypher")


def test_schema_slots_need_a_schema() -> None:
    assert render("RETURN 1 AS ok;", None) == "RETURN 1 AS ok;"
    with pytest.raises(ConfigurationError, match="pass a schema mapping"):
        render("MATCH (c:/*chunk_label*/Chunk)", None)


# --- migrations ------------------------------------------------------------------------------
def test_statements_split_outside_strings_and_skip_element_id_ones() -> None:
    text = (
        "// a; b\nCREATE INDEX /*entity_name_index*/guidedrag_entity_name IF NOT EXISTS\n"
        "FOR (e:/*entity_label*/Entity) ON (/*entity_name*/e.name);\n"
        "CREATE CONSTRAINT /*chunk_id_constraint*/guidedrag_chunk_id IF NOT EXISTS\n"
        "FOR (c:/*chunk_label*/Chunk) REQUIRE /*chunk_id*/c.id IS UNIQUE;\n"
        "RETURN 'x;y';"
    )
    names = dict(T.NAME_DEFAULTS)
    assert T.statements(text, "V1.cypher", BUILDER, names) == [
        "CREATE INDEX `guidedrag_entity_name` IF NOT EXISTS\nFOR (e:`__Entity__`) ON (e.`name`)",
        "RETURN 'x;y'",
    ]
    assert len(T.statements(text, "V1.cypher", DEFAULT, names)) == 3


def test_checksum_ignores_comments_and_params_but_not_statements() -> None:
    names = dict(T.NAME_DEFAULTS)
    base = "// requires: neo4j >= 2026.06\nDROP INDEX /*vector_index*/chunk_embedding IF EXISTS;"
    same = "// a comment\n:param x => 1;\n" + base + "\n"
    assert T.checksum(base, "V", DEFAULT, names) == T.checksum(same, "V", DEFAULT, names)
    other = base.replace("IF EXISTS", "")
    assert T.checksum(base, "V", DEFAULT, names) != T.checksum(other, "V", DEFAULT, names)
    older = base.replace("2026.06", "2026.01")
    assert T.checksum(base, "V", DEFAULT, names) != T.checksum(older, "V", DEFAULT, names)


# --- the shipped templates -------------------------------------------------------------------
def test_every_shipped_template_parses() -> None:
    for path in sorted(cypher_dir().glob("*.cypher")):
        T.load(path.stem)  # its includes resolved, its variants declared and used


def test_the_slot_tables_are_the_schema_fields() -> None:
    fields = set(SchemaMapping.model_fields)
    assert set(L.LABELS) | set(L.PROPERTIES) <= fields
    assert "chunk_label" in L.LABELS and "chunk_embedding" in L.PROPERTIES
    assert {"chunk_id", "document_id", "entity_id"} == L.ID_FIELDS
    assert L.RELATIONSHIPS["mentions"] == ("mentions_type", "mentions_direction")
    assert L.RELATIONSHIPS["next_chunk"] == ("next_chunk_type", None)
    # every string field but the preset name and the mode is a slot
    untyped = {f for f in fields if L.KINDS.get(f) is None and not f.endswith("_direction")}
    assert untyped == {"preset", "relation_mode", "part_of_type", "mentions_type",
                       "next_chunk_type"}  # fmt: skip


def test_rendering_is_memoised() -> None:
    first = T.fragment("select_entity", "set", DEFAULT, variables={"s": "s0"})
    assert T.fragment("select_entity", "set", DEFAULT, variables={"s": "s0"}) is first
    assert T.query("retrieve_exact", DEFAULT) is T.query("retrieve_exact", DEFAULT)


def test_the_renderer_stands_on_the_schema_and_not_back() -> None:
    """schema -> template_lexer -> templates, acyclic: the schema (with the identifier helpers
    and the model it re-exports) imports none of the renderer or the settings (which import it);
    only the modules split out of it and the leaves below them (errors, and the vocabulary its
    presets are checked against)."""
    root = Path(schema_module.__file__).parent.parent

    def imports(module: str) -> set[str]:
        tree = ast.parse((root / f"{module.replace('.', '/')}.py").read_text(encoding="utf-8"))
        found = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        found |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        return {m for m in found if m.startswith("guidedrag_graph")}

    below_schema = {"guidedrag_graph.errors", "guidedrag_graph.vocabulary"}
    split_out = {"guidedrag_graph.identifiers", "guidedrag_graph.schema.model"}
    assert imports("schema.presets") == below_schema | split_out
    assert imports("schema.model") <= below_schema | {"guidedrag_graph.identifiers"}
    assert imports("identifiers") <= below_schema
    for module in (
        "templates.slot_table",
        "templates.lexer",
        "templates.files",
        "templates.render",
    ):
        assert "guidedrag_graph.templates.queries" not in imports(module)
        assert "guidedrag_graph.config" not in imports(module)
    assert "guidedrag_graph.schema.presets" in imports("templates.slot_table")
    assert T.escape_identifier is schema_module.escape_identifier  # one quoting function
