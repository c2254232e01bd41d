"""The one renderer of ``cypher/*.cypher`` and ``migrations/*.cypher``: named slots, escaped once.

Templates are two-way (the "2-way SQL" of Doma/S2Dao): each is written for the default
``guidedrag`` schema and runs as-is in Neo4j Browser after its ``:param`` lines. Where a name
depends on the schema mapping or the settings, an inline comment names the slot and the default
text follows it; Browser ignores the comment, the renderer replaces comment and default::

    MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e:/*entity_label*/Entity)
    WHERE /*entity_id*/e.id IN $sel_ids

One lexer pass reads a template (comments, strings, backticked names, parameters, words); the
output is built by concatenation and never re-scanned, so an inserted identifier is escaped
exactly once, when it is inserted, and no later step can cut or rename it.
One query is one file: where it differs by server version or ranker, ``// @variant`` blocks
hold the differences (``render(..., variant={"u_search": "index"})``), and a shared tail is
``// @include``d; ``browser_script`` gives each variant as Browser runs it.
Slot kinds, markers and syntax: ``cypher/README.md``.

This module is the front door: ``query`` and ``fragment`` by name, memoised per argument tuple.
Filling the slots is ``template_render``'s, loading files (includes, variants, Browser scripts)
``template_files``' and reading one ``template_lexer``'s; their public names are re-exported
here, so callers import the renderer from one place.
"""

from __future__ import annotations

from functools import lru_cache

from guidedrag_graph.schema.presets import ELEMENT_ID as ELEMENT_ID
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.schema.presets import escape_identifier as escape_identifier
from guidedrag_graph.templates import lexer as L
from guidedrag_graph.templates.files import browser_script as browser_script
from guidedrag_graph.templates.files import check_includes as check_includes
from guidedrag_graph.templates.files import load as load
from guidedrag_graph.templates.files import variants as variants
from guidedrag_graph.templates.render import Lists as Lists
from guidedrag_graph.templates.render import Names as Names
from guidedrag_graph.templates.render import Relation as Relation
from guidedrag_graph.templates.render import checksum as checksum
from guidedrag_graph.templates.render import list_items, name_items
from guidedrag_graph.templates.render import render as render
from guidedrag_graph.templates.render import statements as statements

NAME_DEFAULTS = L.NAME_DEFAULTS


def query(
    name: str,
    schema: SchemaMapping | None = None,
    *,
    selection: str | None = None,
    names: Names | None = None,
    lists: Lists | None = None,
    relation: Relation | None = None,
    variant: Names | None = None,
) -> str:
    """The runnable query of ``cypher/<name>.cypher`` (see ``render``); memoised per argument
    tuple. ``schema`` may be left out only by a template without schema slots."""
    return _query(
        name, schema, selection, name_items(names), list_items(lists), relation, name_items(variant)
    )


def fragment(
    file: str,
    part: str,
    schema: SchemaMapping | None,
    *,
    variables: Names | None = None,
    params: Names | None = None,
    steps: int | None = None,
    relation: Relation | None = None,
    lists: Lists | None = None,
    names: Names | None = None,
    variant: Names | None = None,
) -> str:
    """Fragment ``part`` of ``cypher/<file>.cypher`` (see ``render``); memoised per argument
    tuple, since the compiler renders leaf fragments for every question."""
    return _fragment(
        file,
        part,
        schema,
        (
            name_items(variables),
            name_items(params),
            steps,
            relation,
            list_items(lists),
            name_items(names),
            name_items(variant),
        ),
    )


parse = L.parse


@lru_cache(maxsize=1024)
def _query(
    name: str,
    schema: SchemaMapping | None,
    selection: str | None,
    names: tuple[tuple[str, str], ...],
    lists: tuple[tuple[str, tuple[str, ...]], ...],
    relation: Relation | None,
    variant: tuple[tuple[str, str], ...],
) -> str:
    return render(
        load(name),
        schema,
        selection=selection,
        names=dict(names),
        lists=dict(lists),
        relation=relation,
        variant=dict(variant),
    )


_FragmentArgs = tuple[
    tuple[tuple[str, str], ...],
    tuple[tuple[str, str], ...],
    int | None,
    Relation | None,
    tuple[tuple[str, tuple[str, ...]], ...],
    tuple[tuple[str, str], ...],
    tuple[tuple[str, str], ...],
]


@lru_cache(maxsize=4096)
def _fragment(file: str, part: str, schema: SchemaMapping | None, args: _FragmentArgs) -> str:
    variables, params, steps, relation, lists, names, variant = args
    return render(
        load(file),
        schema,
        part=part,
        variables=dict(variables),
        params=dict(params),
        steps=steps,
        relation=relation,
        lists=dict(lists),
        names=dict(names),
        variant=dict(variant),
    )
