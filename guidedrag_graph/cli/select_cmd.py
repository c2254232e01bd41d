"""``guidedrag select`` and ``guidedrag cypher``: look at a selection before retrieving with it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from guidedrag_graph import templates
from guidedrag_graph.cli.common import driver_for, echo_json, load_settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.schema import SchemaMapping
from guidedrag_graph.selection import Selector, parse
from guidedrag_graph.selection.limits import Limits
from guidedrag_graph.selection.selector import PreparedSelection


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
        items = ", ".join(f"`{k}`: {cypher_literal(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise click.ClickException(f"cannot write {type(value).__name__} as a Cypher literal")


def browser_script(prep: PreparedSelection, schema: SchemaMapping) -> str:
    """`:param` lines plus the query (ids, titles, text; no vectors), to paste into Browser."""
    lines = [f"// selection: {prep.text}"]
    if prep.empty is not None:
        lines.append(f"// empty: {prep.empty.kind}: {prep.empty.message}")
    for warning in prep.warnings:
        lines.append(f"// note: {warning.message}")
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
    lines = [f"// selection: {prep.text}", f"// question: {' '.join(question.split())}"]
    if prep.empty is not None:
        lines.append(f"// empty: {prep.empty.kind}: {prep.empty.message}")
    for warning in prep.warnings:
        lines.append(f"// note: {warning.message}")
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
def select(expression: str, as_json: bool, max_ids: int) -> None:
    """Size of every sub-expression (like EXPLAIN ANALYZE) and the selected chunk ids.

    EXPRESSION is the selection DSL, e.g. "entity('Rome') & hop('Rome', ['FOUGHT_IN'])".
    """
    settings = load_settings()
    expr = parse(expression, Limits.from_settings(settings))
    with driver_for(settings) as driver:
        selector = Selector(GraphContext.open(settings, driver))
        prep = selector.prepare(expr)
        tree = selector.sizes(prep)
        ids = selector.chunk_ids(prep)
        empty = prep.empty or (selector.explain_empty(prep) if not ids else None)
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
    click.echo(tree.render())
    for warning in prep.warnings:
        click.echo(f"note: {warning.message}")
    if empty is not None:
        click.echo(f"empty ({empty.kind}): {empty.message}")
        return
    if tree.truncated:
        click.echo(f"note: a hop hit the cap of {settings.hop_cap} entities; the set is partial")
    shown = ids[:max_ids]
    click.echo(
        f"chunks ({len(ids)}): " + " ".join(shown) + (" ..." if len(ids) > len(shown) else "")
    )


@click.command("cypher")
@click.argument("expression")
@click.option(
    "--question",
    default=None,
    help="Also embed this question (configured embedder) and print the ranking query with its "
    "query vector :param, so every retrieve_* template runs on it.",
)
@click.option(
    "-k",
    "--k",
    "k",
    type=click.IntRange(min=1),
    default=None,
    help="Chunks to rank with --question (default GUIDEDRAG_TOP_K).",
)
def cypher(expression: str, question: str | None, k: int | None) -> None:
    """Print the Cypher of a selection as a Neo4j Browser script (:param lines + query).

    Names are resolved against the configured database first, so the script carries entity ids
    and validated relation types. The query returns chunk ids, document titles and text; with
    --question it ranks the selection by cosine to the question (scores, no vectors).
    """
    settings = load_settings()
    expr = parse(expression, Limits.from_settings(settings))
    with driver_for(settings) as driver:
        selector = Selector(GraphContext.open(settings, driver))
        prep = selector.prepare(expr)
        if question is None:
            click.echo(browser_script(prep, selector.schema))
            return
        ids = selector.chunk_ids(prep)
    from guidedrag_graph.embeddings import embedder_for

    vector = embedder_for(settings).embed_queries([question])[0]
    click.echo(
        question_script(
            prep,
            selector.schema,
            question=question,
            vector=[float(x) for x in vector],
            chunk_ids=ids,
            k=k or settings.top_k,
            index_name=settings.vector_index_name,
        )
    )
