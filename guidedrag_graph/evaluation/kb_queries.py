"""The harness's own reads and writes of the KB, beside the pipeline's: corpus size, whether a
selection holds the answer chunk, and clearing the KB between question sets (the queries are
``cypher/selection_size`` and ``selection_members``; clearing is ``kb/wipe.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.db.connection import read_query
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.kb.wipe import wipe_kb
from guidedrag_graph.schema.presets import schema_from_settings
from guidedrag_graph.selection import Expr, Selector
from guidedrag_graph.templates import queries as templates


def corpus_size(driver: Driver, settings: Settings) -> int:
    """Number of chunks in the KB: the search space of base RAG (U)."""
    schema = schema_from_settings(settings)
    every = templates.fragment("select_all", "alone", schema)
    query = templates.query("selection_size", schema, selection=every)
    rows = read_query(driver, query, database=settings.neo4j_database)
    return int(rows[0]["selection_size"])


def gold_in_selection(
    selector: Selector, settings: Settings, expr: Expr, gold_ids: Sequence[str]
) -> bool:
    """Whether any answer chunk belongs to the selection (one read query, after retrieval)."""
    prep = selector.prepare(expr)
    if prep.empty is not None or not gold_ids:
        return False
    schema = schema_from_settings(settings)
    rows = read_query(
        selector.driver,
        templates.query("selection_members", schema, selection=prep.compiled.cypher),
        {**prep.compiled.params, "candidate_ids": list(gold_ids)},
        database=settings.neo4j_database,
    )
    return bool(rows)


def clear_kb(driver: Driver, settings: Settings) -> int:
    """Delete the chunks, documents and entities the loader created (migrations and indexes
    stay); the number of nodes deleted.

    Used only when the caller asked for it (``guidedrag eval --reload``): the precision experiment
    needs the unanswerable KB, which lacks some entities, in place of the full one. Nodes the
    loader did not create (another tool's, or a KB loaded before the ``:__GuidedRAGLoaded``
    label) are never deleted here, and would mix into the next set's KB: refused, one line.
    """
    report = wipe_kb(driver, settings, schema_from_settings(settings))
    note = report.left_note()
    if note is not None:
        raise ConfigurationError(
            f"{note}; an evaluation reload needs a database that holds only guidedrag's KB"
        )
    return report.deleted
