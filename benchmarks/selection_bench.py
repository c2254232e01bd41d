"""Selection cost must follow the selection, not the corpus: PROFILE db-hits and latency.

Loads a KB bundle's graph (documents, chunks without embeddings, entities, mentions, relations)
into a fresh managed Neo4j, measures ``entity(x)`` and ``entity(a) & hop(a, R)`` (PROFILE db hits
of the compiled query, median latency over --runs), then grows the corpus --grow times with
unrelated chunks (each mentions fresh entities linked by the KB's own relation types) and measures
again. Finally prints typical selection sizes for the bundle's questions vs the corpus size.

    python benchmarks/selection_bench.py --bundle out/musique --grow 10
"""

from __future__ import annotations

import argparse
import random
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from neo4j import Driver, GraphDatabase

from guidedrag_graph.config import Settings
from guidedrag_graph.context import GraphContext
from guidedrag_graph.kb import read_bundle
from guidedrag_graph.kb.bundle import Bundle
from guidedrag_graph.migration.run import migrate
from guidedrag_graph.runtime import LocalNeo4j
from guidedrag_graph.schema.presets import PRESETS
from guidedrag_graph.selection import Expr, Selector, entity, hop, khop, near

SCHEMA = PRESETS["guidedrag"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def load_graph(driver: Driver, bundle: Bundle) -> None:
    """The bundle's graph with the default schema; no embeddings (selection never reads them)."""
    run = driver.execute_query
    run(
        "UNWIND $rows AS r CREATE (:Document {id: r.id, title: r.title, source: r.source})",
        {"rows": [{"id": d.id, "title": d.title, "source": d.source} for d in bundle.documents]},
    )
    rows = [{"id": c.id, "doc": c.document_id} for c in bundle.chunks]
    for i in range(0, len(rows), 5000):
        run(
            "UNWIND $rows AS r MATCH (d:Document {id: r.doc}) "
            "CREATE (c:Chunk {id: r.id, document_id: r.doc})-[:PART_OF]->(d)",
            {"rows": rows[i : i + 5000]},
        )
    ents = [
        {
            "id": e.id,
            "name": e.name,
            "key": e.name_key,
            "aliases": list(e.aliases),
            "alias_keys": list(e.alias_keys),
            "type": e.type,
        }
        for e in bundle.entities
    ]
    for i in range(0, len(ents), 5000):
        run(
            "UNWIND $rows AS r CREATE (:Entity {id: r.id, name: r.name, name_key: r.key, "
            "aliases: r.aliases, alias_keys: r.alias_keys, type: r.type})",
            {"rows": ents[i : i + 5000]},
        )
    mentions = [{"c": c, "e": e} for c, ids in bundle.chunk_entity_ids.items() for e in ids]
    for i in range(0, len(mentions), 5000):
        run(
            "UNWIND $rows AS r MATCH (c:Chunk {id: r.c}) MATCH (e:Entity {id: r.e}) "
            "CREATE (c)-[:MENTIONS]->(e)",
            {"rows": mentions[i : i + 5000]},
        )
    rels = [{"h": r.head_id, "t": r.tail_id, "type": r.type} for r in bundle.relations]
    for i in range(0, len(rels), 5000):
        # dynamic relationship types in CREATE (5.26+): one plan for thousands of predicates
        run(
            "UNWIND $rows AS r MATCH (h:Entity {id: r.h}) MATCH (t:Entity {id: r.t}) "
            "CREATE (h)-[:$(r.type)]->(t)",
            {"rows": rels[i : i + 5000]},
        )


def grow(driver: Driver, bundle: Bundle, factor: int, seed: int = 7) -> None:
    """Add (factor - 1) x chunks that share nothing with the original graph."""
    rng = random.Random(seed)
    types = [r.type for r in bundle.relations]  # drawn as often as the KB uses them
    n = len(bundle.chunks) * (factor - 1)
    rows = []
    for i in range(n):
        rows.append(
            {
                "c": f"grow-c{i}",
                "d": f"grow-d{i // 5}",
                "e1": f"grow-e{i}",
                "e2": f"grow-e{rng.randrange(n)}",
                "t": rng.choice(types),
            }
        )
    for i in range(0, n, 5000):
        driver.execute_query(
            "UNWIND $rows AS r MERGE (d:Document {id: r.d}) "
            "CREATE (c:Chunk {id: r.c})-[:PART_OF]->(d) "
            "MERGE (e1:Entity {id: r.e1}) ON CREATE SET e1.name = r.e1, e1.name_key = r.e1 "
            "MERGE (e2:Entity {id: r.e2}) ON CREATE SET e2.name = r.e2, e2.name_key = r.e2 "
            "CREATE (c)-[:MENTIONS]->(e1), (c)-[:MENTIONS]->(e2)",
            {"rows": rows[i : i + 5000]},
        )
    for i in range(0, n, 5000):
        driver.execute_query(
            "UNWIND $rows AS r MATCH (h:Entity {id: r.e1}) MATCH (t:Entity {id: r.e2}) "
            "CREATE (h)-[:$(r.t)]->(t)",
            {"rows": rows[i : i + 5000]},
        )


def db_hits(plan: Any) -> int:
    return int(plan.get("dbHits", 0)) + sum(db_hits(child) for child in plan.get("children", []))


def measure(selector: Selector, expr: Expr, runs: int) -> dict[str, Any]:
    prep = selector.prepare(expr)
    query = prep.compiled.cypher + "\nRETURN c.id AS id"
    driver = selector.driver
    summary = driver.execute_query("PROFILE " + query, prep.compiled.params).summary
    hits = db_hits(summary.profile or {})
    size = len(driver.execute_query(query, prep.compiled.params).records)
    for _ in range(5):  # warm the plan cache and page cache first
        driver.execute_query(query, prep.compiled.params)
    latencies = []
    for _ in range(runs):
        started = time.perf_counter()
        driver.execute_query(query, prep.compiled.params)
        latencies.append(time.perf_counter() - started)
    return {"size": size, "db_hits": hits, "median_ms": 1000 * statistics.median(latencies)}


def pick_terms(bundle: Bundle) -> tuple[str, str, str]:
    """x: the most mentioned entity; (a, R): the entity with most relations of one type."""
    counts: dict[str, int] = {}
    for ids in bundle.chunk_entity_ids.values():
        for e in ids:
            counts[e] = counts.get(e, 0) + 1
    names = {e.id: e.name for e in bundle.entities}
    ranked = sorted(counts, key=lambda e: (counts[e], e))
    x = ranked[-1]  # the most mentioned entity: the largest entity(x) the KB has
    degree: dict[tuple[str, str], int] = {}
    for r in bundle.relations:
        if r.head_id in counts:
            degree[(r.head_id, r.type)] = degree.get((r.head_id, r.type), 0) + 1
    (a, rel), _ = max(degree.items(), key=lambda kv: (kv[1], kv[0]))
    return names[x], names[a], rel


def sizes_table(selector: Selector, bundle: Bundle, corpus: int) -> None:
    kinds: dict[str, list[int]] = {}
    for question in bundle.questions:
        ents = question.semantics.entities
        if not ents:
            continue
        a = ents[0]
        exprs: dict[str, Expr] = {
            "entity(a)": entity(a),
            "entity(a) | khop(a, 1)": entity(a) | khop(a, 1),
            "near(a)": near(a),
        }
        if len(ents) > 1:
            exprs["entity(a) | entity(b)"] = entity(a) | entity(ents[1])
            exprs["entity(a) & entity(b)"] = entity(a) & entity(ents[1])
        for label, expr in exprs.items():
            prep = selector.prepare(expr)
            size = 0 if prep.empty else len(selector.chunk_ids(prep))
            kinds.setdefault(label, []).append(size)
    print(f"\nselection sizes over {len(bundle.questions)} questions, corpus = {corpus} chunks")
    print(f"{'selection':28} {'n':>4} {'empty':>6} {'median':>7} {'mean':>8} {'mean %':>7}")
    for label, values in kinds.items():
        mean = statistics.mean(values)
        print(
            f"{label:28} {len(values):>4} {sum(v == 0 for v in values):>6} "
            f"{statistics.median(values):>7} {mean:>8.1f} {100 * mean / corpus:>6.2f}%"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--grow", type=int, default=10)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--version", default="2026.08.1")
    args = parser.parse_args()
    bundle = read_bundle(args.bundle)
    with tempfile.TemporaryDirectory() as home:
        server = LocalNeo4j(
            Path(home),
            version=args.version,
            cache_dir=Path.home() / ".cache" / "guidedrag" / "neo4j",
            bolt_port=free_port(),
            http_port=free_port(),
            password="bench-password-1",
            heap="1g",
            pagecache="512m",
        )
        server.start()
        try:
            settings = Settings(
                _env_file=None,
                neo4j_uri=server.uri,
                neo4j_password="bench-password-1",
            )
            driver = GraphDatabase.driver(server.uri, auth=("neo4j", "bench-password-1"))
            migrate(driver, settings, SCHEMA)
            load_graph(driver, bundle)
            x, a, rel = pick_terms(bundle)
            exprs = {"entity(x)": entity(x), "entity(a) & hop(a, R)": entity(a) & hop(a, [rel])}
            print(f"server {args.version}; x = {x!r}; a = {a!r}; R = {rel}")
            results: dict[str, dict[str, Any]] = {}
            selector = Selector(GraphContext.open(settings, driver, SCHEMA))
            corpus = len(bundle.chunks)
            for label, expr in exprs.items():
                results[label] = measure(selector, expr, args.runs)
            sizes_table(selector, bundle, corpus)
            grow(driver, bundle, args.grow)
            selector = Selector(GraphContext.open(settings, driver, SCHEMA))
            grown = {label: measure(selector, expr, args.runs) for label, expr in exprs.items()}
            print(f"\ncorpus {corpus} chunks -> {corpus * args.grow} chunks (x{args.grow})")
            print(
                f"{'selection':24} {'size':>5} {'db hits':>9} {'median ms':>10}"
                f" | {'size':>5} {'db hits':>9} {'median ms':>10}"
            )
            for label in exprs:
                r, g = results[label], grown[label]
                print(
                    f"{label:24} {r['size']:>5} {r['db_hits']:>9} {r['median_ms']:>10.2f}"
                    f" | {g['size']:>5} {g['db_hits']:>9} {g['median_ms']:>10.2f}"
                )
            driver.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
