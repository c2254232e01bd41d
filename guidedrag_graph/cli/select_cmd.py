"""``guidedrag select`` and ``guidedrag cypher``: look at a selection before retrieving with it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from guidedrag_graph.cli.common import driver_for, echo_json, load_settings, schema_of
from guidedrag_graph.cli.scoped_selection import (
    SCOPE_HELP,
    operator_scope,
    prepare_in_scope,
    selected,
)
from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.identifiers import escape_identifier, printable
from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import Selector, parse
from guidedrag_graph.selection.limits import Limits
from guidedrag_graph.selection.selector import PreparedSelection
from guidedrag_graph.templates import queries as templates

if TYPE_CHECKING:
    from guidedrag_graph.pipeline import RetrievalResult


def cypher_literal(value: Any) -> str:
    """A Cypher literal for a :param line (strings escaped; lists and maps recursively)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace("'", "\\'")
        escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        return "'" + escaped + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(
            f"{escape_identifier(str(k), 'a map key')}: {cypher_literal(v)}"
            for k, v in value.items()
        )
        return "{" + items + "}"
    raise click.ClickException(f"cannot write {type(value).__name__} as a Cypher literal")


def comment(text: str) -> str:
    """A ``//`` line of a Browser script: whatever ``text`` holds (a selection, a question, a
    message naming types read from the database), nothing in it can end the line and start a
    statement — every control character and line separator is escaped (``printable``)."""
    return "// " + printable(text)


def browser_script(prep: PreparedSelection, schema: SchemaMapping) -> str:
    """`:param` lines plus the query (ids, titles, text; no vectors), to paste into Browser."""
    lines = [comment(f"selection: {prep.text}")]
    if prep.empty is not None:
        lines.append(comment(f"empty: {prep.empty.kind}: {prep.empty.message}"))
    for warning in prep.warnings:
        lines.append(comment(f"note: {warning.message}"))
    for name, value in sorted(prep.compiled.params.items()):
        lines.append(f":param {name} => {cypher_literal(value)};")
    query = templates.query("selection_chunks", schema, selection=prep.compiled.cypher)
    lines.append(query.rstrip() + ";")
    return "\n".join(lines)


def question_script(
    prep: PreparedSelection,
    schema: SchemaMapping,
    *,
    question: str,
    vector: Sequence[float],
    chunk_ids: Sequence[str],
    k: int,
    index_name: str,
) -> str:
    """The ranking script for a question: exact cosine inside the selection (retrieve_exact).

    Its `:param` lines also carry everything the shipped ``retrieve_*`` templates take (the
    question's vector, ``fetch_k``, the index name, and ``sel_chunk_ids`` = the selection resolved
    to ids), so each of those files runs on this question after these lines.
    """
    lines = [comment(f"selection: {prep.text}"), comment(f"question: {' '.join(question.split())}")]
    if prep.empty is not None:
        lines.append(comment(f"empty: {prep.empty.kind}: {prep.empty.message}"))
    for warning in prep.warnings:
        lines.append(comment(f"note: {warning.message}"))
    params: dict[str, Any] = dict(prep.compiled.params)
    params.update(
        {
            "sel_chunk_ids": list(chunk_ids),
            "fetch_k": k,
            "with_embedding": False,
            "index_name": index_name,
        }
    )
    for name, value in sorted(params.items()):
        lines.append(f":param {name} => {cypher_literal(value)};")
    # 9 significant digits write a float32 exactly; the line stays ~12 characters a dimension.
    floats = ", ".join(format(float(x), ".9g") for x in vector)
    lines.append(f":param query_vector => [{floats}];")
    query = templates.query("retrieve_exact", schema, selection=prep.compiled.cypher)
    lines.append(query.rstrip() + ";")
    return "\n".join(lines)


@click.command("select")
@click.argument("expression")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--max-ids",
    default=100,
    show_default=True,
    type=click.IntRange(min=0),
    help="Chunk ids to print at most.",
)
@click.option("--scope", default=None, help=SCOPE_HELP)
def select(expression: str, as_json: bool, max_ids: int, scope: str | None) -> None:
    """Size of every sub-expression (like EXPLAIN ANALYZE) and the selected chunk ids.

    EXPRESSION is the selection DSL, e.g. "entity('Rome') & hop('Rome', ['FOUGHT_IN'])".
    """
    settings = load_settings()
    bound = operator_scope(settings.scope, scope)
    expr = parse(expression, Limits.from_settings(settings))
    with driver_for(settings) as driver:
        selector = Selector(GraphContext.open(settings, driver))
        found = prepare_in_scope(selector, expr, bound)
        prep = found.prepared
        tree, ids, empty = selected(selector, found)
    if as_json:
        echo_json(
            {
                "selection": prep.text,
                "size": len(ids),
                "truncated": tree.truncated,
                "tree": tree.to_json(),
                "chunk_ids": ids,
                "empty": empty.to_json() if empty else None,
                "warnings": [w.to_json() for w in prep.warnings],
            }
        )
        return
    click.echo("   size  selection")
    click.echo("\n".join(printable(line) for line in tree.render().split("\n")))
    for warning in prep.warnings:
        click.echo(printable(f"note: {warning.message}"))
    if empty is not None:
        click.echo(printable(f"empty ({empty.kind}): {empty.message}"))
        return
    if tree.truncated:
        click.echo(f"note: a hop hit the cap of {settings.hop_cap} entities; the set is partial")
    shown = ids[:max_ids]
    click.echo(
        f"chunks ({len(ids)}): " + " ".join(shown) + (" ..." if len(ids) > len(shown) else "")
    )


def auto_script(result: RetrievalResult) -> str:
    """The ranking ``GuidedRAG.retrieve`` ran (the default, ``auto``), as a Browser script: its
    ``:param`` lines (the question's vector included) and the tiers' query as it ran, so Browser
    returns the same ids."""
    lines = [
        comment(f"steering: {result.steering}   question: {' '.join(result.question.split())}")
    ]
    lines.append(comment(f"selection: {result.selection_text or 'all()'}"))
    for linked in result.linked:
        span, match = linked["span"], linked["match"]
        target = linked.get("entity") or linked.get("relation")
        lines.append(comment(f"linked: {span!r} -> {target} ({match})"))
    if result.tier_sizes:
        sizes = ", ".join(f"{name} {n}" for name, n in result.tier_sizes.items())
        lines.append(comment(f"tiers (chunks): {sizes}"))
    for note in result.notes:
        lines.append(comment(f"note: {note}"))
    if result.empty is not None:
        lines.append(comment(f"abstained: {result.empty.message} (nothing to rank)"))
        return "\n".join(lines)
    for name, value in sorted(result.params.items()):
        if name == "query_vector":
            floats = ", ".join(format(float(x), ".9g") for x in value)
            lines.append(f":param query_vector => [{floats}];")
        else:
            lines.append(f":param {name} => {cypher_literal(value)};")
    lines.append(result.cypher.rstrip() + ";")
    return "\n".join(lines)


@click.command("cypher")
@click.argument("expression", required=False)
@click.option(
    "--question",
    default=None,
    help="Also embed this question (configured embedder) and print the ranking query with its "
    "query vector :param. Without EXPRESSION: the default ranking (auto) of the question, as "
    "`guidedrag retrieve` runs it.",
)
@click.option(
    "-k",
    "--k",
    "k",
    type=click.IntRange(min=1),
    default=None,
    help="Chunks to rank with --question (default GUIDEDRAG_TOP_K).",
)
@click.option("--entity", "entities", multiple=True, help="without EXPRESSION: a stated entity")
@click.option("--relation", "relations", multiple=True, help="without EXPRESSION: a relation")
@click.option("--json", "as_json", is_flag=True, help="Print script, query and params as JSON.")
@click.option("--scope", default=None, help=SCOPE_HELP)
def cypher(
    expression: str | None,
    question: str | None,
    k: int | None,
    entities: Sequence[str],
    relations: Sequence[str],
    as_json: bool,
    scope: str | None,
) -> None:
    """Print the Cypher of a selection as a Neo4j Browser script (:param lines + query).

    Names are resolved against the configured database first, so the script carries entity ids
    and validated relation types. The query returns chunk ids, document titles and text; with
    --question it ranks the selection by cosine to the question (scores, no vectors). With
    --question and no EXPRESSION it is the default ranking (auto: graded tiers from --entity,
    or from the entities linked from the question), whose ids equal `guidedrag retrieve`'s.
    """
    settings = load_settings()
    bound = operator_scope(settings.scope, scope)
    if expression is None:
        if question is None:
            raise click.UsageError("give a selection EXPRESSION, or --question for auto's ranking")
        _auto_cypher(settings, question, k, entities, relations, as_json, scope)
        return
    if entities or relations:
        raise click.UsageError("--entity/--relation go without EXPRESSION (auto's ranking)")
    expr = parse(expression, Limits.from_settings(settings))
    with driver_for(settings) as driver:
        selector = Selector(GraphContext.open(settings, driver))
        prep = prepare_in_scope(selector, expr, bound).prepared
        if question is None:
            script = browser_script(prep, selector.schema)
            _emit(script, as_json, {"selection": prep.text, "params": prep.compiled.params})
            return
        ids = [] if prep.empty is not None else selector.chunk_ids(prep)
    from guidedrag_graph.embeddings import embedder_for

    vector = embedder_for(settings).embed_queries([question])[0]
    script = question_script(
        prep,
        selector.schema,
        question=question,
        vector=[float(x) for x in vector],
        chunk_ids=ids,
        k=k or settings.top_k,
        index_name=settings.vector_index_name,
    )
    _emit(script, as_json, {"selection": prep.text, "steering": "hard"})


def _auto_cypher(
    settings: Settings,
    question: str,
    k: int | None,
    entities: Sequence[str],
    relations: Sequence[str],
    as_json: bool,
    scope: str | None = None,
) -> None:
    from guidedrag_graph.cli.ask_cmd import stated_semantics
    from guidedrag_graph.pipeline import GuidedRAG

    with driver_for(settings) as driver:
        rag = GuidedRAG(settings, driver=driver, schema=schema_of(settings), scope=scope)
        result = rag.retrieve(question, semantics=stated_semantics(entities, relations, None), k=k)
    data = result.to_dict()
    _emit(
        auto_script(result),
        as_json,
        {
            key: data[key]
            for key in ("selection", "steering", "tier_sizes", "linked", "notes", "params")
        }
        | {"query": result.cypher, "chunk_ids": [c.id for c in result.chunks]},
    )


def _emit(script: str, as_json: bool, extra: dict[str, Any]) -> None:
    if as_json:
        echo_json({**extra, "script": script})
    else:
        click.echo(script)
