"""The identifier fuzz of the hostile suite: hostile names through every identifier source.

Sources: a mapping file's fields (labels, types, property keys), the index-name settings, and
names that come from the database (relationship types, property keys). Two parts:

- ``compile_fuzz``: every name, no server. A name is refused in one line, or every query it
  reaches renders with the same shape as a benign name (``security.shape``) and every quoted
  identifier is one Neo4j reads as written (``security.safely_quoted``): select, retrieve, load
  and migrate templates, the hop compiler and the filter compiler.
- ``db_fuzz``: a subset against the real server with the sample KB: a mapping file read and a
  selection run under it; an index-name setting read and a retrieve run under it; a
  relationship type and a property key created in the database by parameter (``$(...)`` dynamic
  types, ``c[$key]``: nothing under test does the creating), then ``hop()`` over the type and a
  retrieve filtered on the key. Around the batch: counts and checksum, every index and
  constraint, and the requests the 127.0.0.1 listener got (names carry ``LOAD CSV`` to it).

``tests/test_security_fuzz.py`` runs the short form; ``scripts/security_fuzz.py --names N`` the
long one and prints the figures.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neo4j import Driver
from pydantic import ValidationError

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.errors import GuidedRAGError
from guidedrag_graph.migration.run import discover, index_names
from guidedrag_graph.resources import cypher_dir
from guidedrag_graph.retrieval.filters import compile_filter
from guidedrag_graph.schema.presets import PRESETS, SchemaMapping, load_schema_file
from guidedrag_graph.selection import Selector, hop
from guidedrag_graph.selection.compiler import compile_plan
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.templates import queries as templates
from tests.security import quoted_parts, safely_quoted, schema_names, shape, snapshot

# Mapping fields that become identifiers, with their mapping-file section and key.
MAPPING_FIELDS = [
    ("document", "label", "document_label"), ("chunk", "label", "chunk_label"),
    ("entity", "label", "entity_label"), ("chunk", "id", "chunk_id"),
    ("chunk", "text", "chunk_text"), ("chunk", "embedding", "chunk_embedding"),
    ("entity", "id", "entity_id"), ("entity", "name", "entity_name"),
    ("entity", "name_key", "entity_key"), ("entity", "aliases", "entity_aliases"),
    ("document", "title", "document_title"), ("mentions", "type", "mentions_type"),
    ("part_of", "type", "part_of_type"), ("relations", "generic_type", "generic_relation_type"),
]  # fmt: skip
SETTING_FIELDS = [
    "vector_index_name",
    "entity_fulltext_index_name",
    "entity_vector_index_name",
    "index_prefix",
]
# What a mapping reaches: selection, resolution, retrieval, loading (templates.query renders).
MAPPING_TEMPLATES = [
    "select_entity", "select_near", "select_document", "resolve_entity", "selection_cost",
    "selection_ids", "retrieve_exact", "retrieve_filter", "load_documents",
    "load_entities_declared", "load_chunks", "load_entity_conflicts", "kb_stats",
]  # fmt: skip
BENIGN = "Benign_Name"


@dataclass
class Figures:
    """What a fuzz run saw, per source: names accepted, refused, and the failures (must be 0)."""

    accepted: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    renders: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    writes: int = 0
    schema_changes: int = 0
    outbound: int = 0

    def fail(self, source: str, name: str, why: str) -> None:
        self.failures.append(f"{source} {name[:80]!r}: {why}")


def _refused(figures: Figures, source: str, name: str, exc: Exception) -> None:
    """A refusal must be one line (a pydantic error is shown one line by the CLI: its first)."""
    message = str(exc) if not isinstance(exc, ValidationError) else exc.errors()[0]["msg"]
    figures.refused[source] += 1
    if "\n" in message.strip():
        figures.fail(source, name, f"refusal is not one line: {message[:200]!r}")


def _same_shape(figures: Figures, source: str, name: str, text: str, benign: str) -> None:
    figures.renders += 1
    if shape(text) != shape(benign):
        figures.fail(source, name, "the rendered query has another shape than with a benign name")
    bad = [q for q in quoted_parts(text) if not safely_quoted(q)]
    if bad:
        figures.fail(source, name, f"unsafe identifier {bad[0][:60]!r}")


def _mapping_renders(schema: SchemaMapping, names: list[str]) -> list[str]:
    return [templates.query(t, schema) for t in names]


def compile_fuzz(names: list[str], *, all_templates: bool = False) -> Figures:
    """Every name through every source, rendered (no server)."""
    started = time.perf_counter()
    figures = Figures()
    wanted = MAPPING_TEMPLATES if not all_templates else _renderable_templates()
    base = PRESETS["guidedrag"]
    benign_mapping: dict[str, list[str]] = {}
    migrations = discover()
    default_settings = Settings(_env_file=None).model_dump()  # type: ignore[call-arg]
    benign_migrations: dict[str, list[list[str]]] = {}
    benign_filter = compile_filter({BENIGN: {"$in": [1, 2]}, "position": 1}).narrow(base)
    for i, name in enumerate(names):
        # 1. a mapping file's field (constructed as load_schema_file does, from the fields)
        _section, _key, fld = MAPPING_FIELDS[i % len(MAPPING_FIELDS)]
        try:
            schema = SchemaMapping.model_validate({**base.model_dump(), fld: name})
        except (ValidationError, GuidedRAGError) as exc:
            _refused(figures, "mapping", name, exc)
        else:
            figures.accepted["mapping"] += 1
            if fld not in benign_mapping:
                benign = SchemaMapping.model_validate({**base.model_dump(), fld: BENIGN})
                benign_mapping[fld] = _mapping_renders(benign, wanted)
            try:
                rendered = _mapping_renders(schema, wanted)
            except GuidedRAGError as exc:
                _refused(figures, "mapping", name, exc)
            else:
                for text, ok in zip(rendered, benign_mapping[fld], strict=True):
                    _same_shape(figures, "mapping", name, text, ok)
        # 2. an index-name setting (as the environment would give it)
        setting = SETTING_FIELDS[i % len(SETTING_FIELDS)]
        try:  # the same validators as reading the environment (without re-reading it)
            settings = Settings.model_validate({**default_settings, setting: name})
        except (ValidationError, GuidedRAGError, ValueError) as exc:
            _refused(figures, "setting", name, exc)
        else:
            figures.accepted["setting"] += 1
            if setting not in benign_migrations:
                benign_settings = Settings.model_validate({**default_settings, setting: BENIGN})
                benign_migrations[setting] = [
                    m.statements(base, index_names(benign_settings)) for m in migrations
                ]
            for m, ok in zip(migrations, benign_migrations[setting], strict=True):
                got = m.statements(base, index_names(settings))
                for text, good in zip(got, ok, strict=True):
                    _same_shape(figures, "setting", name, text, good)
            for slot in ("vector_index",):
                text = templates.query("retrieve_search", base, names={slot: name})
                good = templates.query("retrieve_search", base, names={slot: BENIGN})
                _same_shape(figures, "setting", name, text, good)
        # 3. a relationship type from the database, through the hop compiler
        try:
            text = _hop_cypher(name)
        except GuidedRAGError as exc:
            _refused(figures, "db_type", name, exc)
        else:
            figures.accepted["db_type"] += 1
            _same_shape(figures, "db_type", name, text, _hop_cypher(BENIGN))
        # 4. a property key (from a bundle's metadata, in the database) in a filter
        try:
            text = compile_filter({name: {"$in": [1, 2]}, "position": 1}).narrow(base)
        except GuidedRAGError as exc:
            _refused(figures, "db_key", name, exc)
        else:
            figures.accepted["db_key"] += 1
            _same_shape(figures, "db_key", name, text, benign_filter)
    figures.seconds = time.perf_counter() - started
    return figures


def _hop_cypher(rel_type: str) -> str:
    expr = hop("x", [rel_type], 2, direction="out")
    resolved = {expr: Resolved(ids=("x",), types=(rel_type,))}
    return compile_plan(expr, resolved, PRESETS["guidedrag"], hop_cap=10).body


def _renderable_templates() -> list[str]:
    out: list[str] = []
    for path in sorted(cypher_dir().glob("*.cypher")):
        try:
            templates.query(path.stem, PRESETS["guidedrag"])
        except Exception:
            continue
        out.append(path.stem)
    return out


def db_fuzz(
    driver: Driver,
    settings: Settings,
    names: list[str],
    outbound: list[str],
    query_vector: list[float],
) -> Figures:
    """A subset against the real server (the sample KB loaded); ``outbound``: the listener's
    request log. Fills writes / schema_changes / outbound (all must be 0)."""
    started = time.perf_counter()
    figures = Figures()
    from guidedrag_graph.pipeline import GuidedRAG

    before, schema_before, requests_before = snapshot(driver), schema_names(driver), len(outbound)
    graph = GraphContext.open(settings, driver)
    france = {
        r["id"]
        for r in driver.execute_query(
            "MATCH (:Entity {name: 'France'})<-[:MENTIONS]-(c:Chunk) RETURN c.id AS id"
        ).records
    }
    probe_chunk = next(iter(sorted(france)))
    with tempfile.TemporaryDirectory() as tmp, GuidedRAG(settings, driver=driver) as rag:
        for i, name in enumerate(names):
            _db_mapping(figures, driver, settings, name, Path(tmp) / f"m{i}.json", i)
            _db_setting(figures, driver, settings, name, query_vector, i, GuidedRAG)
            _db_type(figures, driver, graph, name, france)
            _db_key(figures, driver, rag, name, probe_chunk, query_vector)
    after = snapshot(driver)
    figures.writes = int(after != before)
    figures.schema_changes = len(schema_names(driver) ^ schema_before)
    figures.outbound = len(outbound) - requests_before
    figures.seconds = time.perf_counter() - started
    return figures


def _db_mapping(
    figures: Figures, driver: Driver, settings: Settings, name: str, path: Path, i: int
) -> None:
    section, key, _fld = MAPPING_FIELDS[i % len(MAPPING_FIELDS)]
    path.write_text(json.dumps({section: {key: name}}), encoding="utf-8", errors="surrogatepass")
    try:
        schema = load_schema_file(path)
    except GuidedRAGError as exc:
        _refused(figures, "mapping", name, exc)
        return
    figures.accepted["mapping"] += 1
    try:
        Selector(GraphContext.open(settings, driver, schema)).chunk_ids(
            "near('Euro') | entity('France')"
        )
    except GuidedRAGError as exc:
        _refused(figures, "mapping", name, exc)  # e.g. the mapping fits no node: one line


def _db_setting(
    figures: Figures,
    driver: Driver,
    settings: Settings,
    name: str,
    vector: list[float],
    i: int,
    rag_type: Any,
) -> None:
    setting = SETTING_FIELDS[i % len(SETTING_FIELDS)]
    try:
        tuned = Settings.model_validate({**settings.model_dump(), setting: name})
    except (ValidationError, GuidedRAGError, ValueError) as exc:
        _refused(figures, "setting", name, exc)
        return
    figures.accepted["setting"] += 1
    try:
        with rag_type(tuned, driver=driver) as rag:
            rag.retrieve("euro", "entity('Euro')", query_vector=vector, steering="hard")
    except GuidedRAGError as exc:
        _refused(figures, "setting", name, exc)  # no index of that name: one line


def _db_type(
    figures: Figures, driver: Driver, graph: GraphContext, name: str, france: set[str]
) -> None:
    try:
        templates.escape_identifier(name)
    except GuidedRAGError as exc:  # NUL or a lone surrogate: no token can hold it
        _refused(figures, "db_type", name, exc)
        return
    driver.execute_query(
        "MATCH (a:Entity {name: 'Euro'}), (b:Entity {name: 'France'}) CREATE (a)-[:$($t)]->(b)",
        t=name,
    )
    try:
        graph.data.clear()
        got = set(Selector(graph).chunk_ids(hop("Euro", [name], direction="out")))
        figures.accepted["db_type"] += 1
        if got != france:
            figures.fail("db_type", name, f"hop() over it found {len(got)} chunks, not France's")
    except GuidedRAGError as exc:
        _refused(figures, "db_type", name, exc)
    finally:
        driver.execute_query("MATCH ()-[r]->() WHERE type(r) = $t DELETE r", t=name)


def _db_key(
    figures: Figures, driver: Driver, rag: Any, name: str, chunk: str, vector: list[float]
) -> None:
    try:
        templates.escape_identifier(name)
        driver.execute_query("MATCH (c:Chunk {id: $id}) SET c[$k] = 1", id=chunk, k=name)
    except GuidedRAGError as exc:
        _refused(figures, "db_key", name, exc)
        return
    try:
        rag.graph.data.clear()  # the property keys are read again
        got = rag.retrieve("france", query_vector=vector, filters={name: 1}, k=3)
        figures.accepted["db_key"] += 1
        if [c.id for c in got.chunks] != [chunk]:
            figures.fail("db_key", name, f"filtered retrieve gave {[c.id for c in got.chunks]}")
    except GuidedRAGError as exc:
        _refused(figures, "db_key", name, exc)
    finally:
        driver.execute_query("MATCH (c:Chunk {id: $id}) SET c[$k] = null", id=chunk, k=name)
