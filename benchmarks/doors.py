"""Every way in, side by side: what one question costs through each door, against neo4j-graphrag's
own ``VectorRetriever`` on the same server, the same question vectors and the same k.

Doors (one process, interleaved per question in a rotating order, after a warm-up pass; names
resolved within ``GUIDEDRAG_RESOLUTION_CACHE_S`` as for any repeated entity):

- ``ping``: ``RETURN 1`` through ``driver.execute_query`` (the floor as users call it);
- ``vector``: neo4j-graphrag ``VectorRetriever.search(query_vector=..., top_k=k)`` returning the
  chunk id only (the ratios' base: the least a retriever can send back);
- ``vector_text``: the same retriever built as its docs show, with no ``return_properties``
  (every property but the embedding: the text a RAG app needs, as ``default`` returns it);
- ``default``: ``GuidedRAG.retrieve(question, semantics=..., query_vector=...)`` (``auto``);
- ``question``: the bare question (``auto``, entities linked by ``EntityLinker``);
- ``guidedretriever``: ``GuidedRetriever.search(query_text=..., query_vector=...)``, bare, as a
  ``GraphRAG`` app calls it;
- ``linker``: ``EntityLinker.link`` alone;
- ``langchain`` / ``llamaindex``: the adapters, bare (they embed the question: from the on-disk
  embedding cache after the warm-up), when those packages are installed.

A bundle with no questions (``kb/synthetic.py``'s) gets questions made from its chunks
(``synthetic_questions``): each names its chunk's least-mentioned entity, with the chunk's own
vector as the question's.

Also printed: the Python time of ``default`` and ``question`` outside Neo4j reads (the call's
wall time minus the time spent inside the driver's session, measured around each read),
the load average before, between passes and after, and the server. Results go to
``benchmarks/results/doors_<neo4j version>_<date>.json`` (``..._<label>.json`` with ``--label``;
or ``--out``).

    python benchmarks/doors.py --bundle out/musique              # NEO4J_URI etc. from the env
    python benchmarks/doors.py --bundle out/musique --passes 5 --limit 100
    python benchmarks/doors.py --bundle out/musique --passes 5 --runs 5  # medians of 5 runs

``--runs``: whole runs one after another in the same process, each with its own warm-up; the
figures are the medians over runs (each ratio taken within its run), every run kept under
``runs``. This machine has fast and slow spells lasting minutes (``VectorRetriever`` 1.0-2.6 ms
on the same data, load alike), so one run can land in either.

Medians and ratios, not single figures: the machines are shared (say the load beside them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neo4j_graphrag.retrievers import VectorRetriever  # noqa: E402

from guidedrag_graph.config import Settings  # noqa: E402
from guidedrag_graph.db import connection as db  # noqa: E402
from guidedrag_graph.db.connection import connect, server_info  # noqa: E402
from guidedrag_graph.embeddings import embedder_for  # noqa: E402
from guidedrag_graph.integrations.neo4j_graphrag import GuidedRetriever  # noqa: E402
from guidedrag_graph.kb import Question, read_questions  # noqa: E402
from guidedrag_graph.linking.entities import EntityLinker  # noqa: E402
from guidedrag_graph.pipeline import GuidedRAG  # noqa: E402
from guidedrag_graph.schema.presets import schema_for  # noqa: E402
from guidedrag_graph.semantics import Semantics  # noqa: E402
from guidedrag_graph.templates import queries as templates  # noqa: E402

Door = Callable[[Any, list[float]], object]


ReadOnce = Callable[..., Any]


def patch_reads(wrap: Callable[[ReadOnce], ReadOnce]) -> Callable[[], None]:
    """Put ``wrap(db._read_once)`` in its place (every read the library sends passes there, on
    the caller's thread); returns what puts the original back."""
    inner = db._read_once
    db._read_once = wrap(inner)

    def restore() -> None:
        db._read_once = inner

    return restore


Read = tuple[str, dict[str, Any]]


@contextmanager
def recorded(reads: list[Read]) -> Iterator[None]:
    """Every read the library sends, as (query text, parameters), while the block runs."""

    def keeping(inner: ReadOnce) -> ReadOnce:
        def keep(driver: Any, query: Any, params: dict[str, Any], *rest: Any) -> Any:
            reads.append((str(getattr(query, "text", query)), dict(params)))
            return inner(driver, query, params, *rest)

        return keep

    restore = patch_reads(keeping)
    try:
        yield
    finally:
        restore()


def id_retriever(driver: Any, settings: Settings, rag: GuidedRAG) -> VectorRetriever:
    """neo4j-graphrag's ``VectorRetriever`` returning the chunk id only: the ratios' base (the
    least a retriever can send back)."""
    return VectorRetriever(
        driver,
        settings.vector_index_name,
        return_properties=[rag.schema.chunk_id],
        neo4j_database=settings.neo4j_database,
    )


class ReadClock:
    """Seconds spent inside the driver's session per call."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total = 0.0
        self.close = patch_reads(self._timed)

    def _timed(self, inner: ReadOnce) -> ReadOnce:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                with self.lock:
                    self.total += time.perf_counter() - t0

        return timed

    def take(self) -> float:
        with self.lock:
            spent, self.total = self.total, 0.0
        return spent


def questions_and_rag(
    settings: Settings, driver: Any, bundle: Path, limit: int
) -> tuple[list[Question], list[list[float]], GuidedRAG]:
    """The bundle's first ``limit`` answerable questions, their query vectors (from the on-disk
    embedding cache once embedded) and a ``GuidedRAG`` on ``driver``: what each door is given."""
    questions = [q for q in read_questions(bundle) if q.answerable][:limit]
    embedder = embedder_for(settings, cache=True)
    if questions:
        vectors = [[float(x) for x in row] for row in embedder.embed_queries(
            [q.question for q in questions]
        )]  # fmt: skip
    else:
        questions, vectors = synthetic_questions(bundle, limit)
    rag = GuidedRAG(
        settings, driver=driver, schema=schema_for(settings.schema_preset), embedder=embedder
    )
    return questions, vectors, rag


def synthetic_questions(bundle: Path, limit: int) -> tuple[list[Question], list[list[float]]]:
    """For a bundle with no questions (``kb/synthetic.py``'s): ``limit`` chunks spread evenly
    over the file, each asked about its least-mentioned entity by name ("What does the KB say
    about Entity 1000?", the entity as its semantics), its own vector as the question's. The
    least-mentioned, because a question names a specific thing, not the KB's top hub; the
    chunk's own vector, because the bundle's vectors are not any embedder's."""
    entity_ids = re.compile(r'"entities":\s*\[([^\]]*)\]')
    mentions: Counter[str] = Counter()
    lines = 0
    with (bundle / "chunks.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            lines += 1
            if found := entity_ids.search(line):
                mentions.update(json.loads(f"[{found.group(1)}]"))
    names: dict[str, str] = {}
    with (bundle / "entities.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            entity = json.loads(line)
            names[str(entity["id"])] = str(entity["name"])
    stride = max(1, lines // max(1, limit))
    questions: list[Question] = []
    vectors: list[list[float]] = []
    with (bundle / "chunks.jsonl").open(encoding="utf-8") as rows:
        for i, line in enumerate(rows):
            if i % stride or len(questions) == limit:
                continue
            chunk = json.loads(line)
            known = [e for e in chunk.get("entities", []) if e in names]
            if not known:
                continue
            name = names[min(known, key=lambda e: (mentions[e], e))]
            questions.append(
                Question(
                    id=f"synthetic-{chunk['id']}",
                    question=f"What does the KB say about {name}?",
                    semantics=Semantics(entities=(name,)),
                    gold_chunk_ids=[chunk["id"]],
                )
            )
            vectors.append([float(x) for x in chunk["embedding"]])
    return questions, vectors


def _adapters(rag: GuidedRAG) -> dict[str, Door]:
    doors: dict[str, Door] = {}
    try:
        from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever

        lc = GuidedLangChainRetriever(rag=rag)
        doors["langchain"] = lambda q, v: lc.invoke(q.question)
    except ImportError:
        pass
    try:
        from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

        li = GuidedLlamaIndexRetriever(rag)
        doors["llamaindex"] = lambda q, v: li.retrieve(q.question)
    except ImportError:
        pass
    return doors


def one_run(
    doors: dict[str, Door],
    questions: list[Question],
    vectors: list[list[float]],
    passes: int,
    clock: ReadClock,
) -> dict[str, Any]:
    """A warm-up pass, then ``passes`` timed ones, every door per question in a rotating order:
    each door's median, its ratio to ``vector``'s, Python outside reads, the load."""
    names = list(doors)
    times: dict[str, list[float]] = {n: [] for n in names}
    python: dict[str, list[float]] = {"default": [], "question": []}
    loads = [os.getloadavg()]
    for rep in range(passes + 1):
        for i, (q, v) in enumerate(zip(questions, vectors, strict=True)):
            order = names[i % len(names) :] + names[: i % len(names)]
            for name in order:
                clock.take()
                t0 = time.perf_counter()
                doors[name](q, v)
                took = time.perf_counter() - t0
                spent = clock.take()
                if rep == 0:
                    continue  # warm-up: plans, caches, connections
                times[name].append(took)
                if name in python:
                    python[name].append(took - spent)
        loads.append(os.getloadavg())
    p50 = {n: round(1000 * statistics.median(t), 3) for n, t in times.items()}
    return {
        "p50_ms": p50,
        "ratio_to_vector": {n: round(p50[n] / p50["vector"], 3) for n in names},
        "python_outside_reads_p50_ms": {
            n: round(1000 * statistics.median(t), 3) for n, t in python.items()
        },
        "load": {
            "before": [round(x, 2) for x in loads[0]],
            "after_each_pass": [[round(x, 2) for x in load] for load in loads[1:]],
        },
    }


def _median(values: Iterable[float]) -> float:
    return round(float(statistics.median(list(values))), 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True, help="a bundle with questions")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=100, help="answerable questions to time")
    parser.add_argument("--passes", type=int, default=3, help="timed passes after the warm-up")
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="whole runs (warm-up and passes) one after another; figures are their medians",
    )
    parser.add_argument("--label", default="", help="a name for this KB in the results")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.passes < 1:
        parser.error("--runs and --passes must be at least 1")

    settings = Settings(openai_api_key=None, openai_base_url=None)
    driver = connect(settings)
    clock = ReadClock()
    try:
        questions, vectors, rag = questions_and_rag(settings, driver, args.bundle, args.limit)
        vector = id_retriever(driver, settings, rag)
        vector_text = VectorRetriever(
            driver, settings.vector_index_name, neo4j_database=settings.neo4j_database
        )
        guided = GuidedRetriever(driver, settings, rag=rag)
        linker = EntityLinker(rag.graph)
        k = args.k
        ping = templates.query("connection_check")  # RETURN 1
        doors: dict[str, Door] = {
            "ping": lambda q, v: driver.execute_query(ping, database_=settings.neo4j_database),
            "vector": lambda q, v: vector.search(query_vector=v, top_k=k),
            "vector_text": lambda q, v: vector_text.search(query_vector=v, top_k=k),
            "default": lambda q, v: rag.retrieve(
                q.question, semantics=q.semantics, query_vector=v, k=k
            ),
            "question": lambda q, v: rag.retrieve(q.question, query_vector=v, k=k),
            "guidedretriever": lambda q, v: guided.search(
                query_text=q.question, query_vector=v, top_k=k
            ),
            "linker": lambda q, v: linker.link(q.question),
            **_adapters(rag),
        }
        runs = [one_run(doors, questions, vectors, args.passes, clock) for _ in range(args.runs)]
        names = list(doors)
        summary: dict[str, Any] = {
            "label": args.label or args.bundle.name,
            "bundle": str(args.bundle),
            "neo4j_version": server_info(driver).version,
            "rank_plugin": rag.graph.rank_plugin,
            "questions": len(questions),
            "passes": args.passes,
            "k": k,
            "cpus": os.cpu_count(),
            # One run: its medians. Several: the median over runs of each run's median and of
            # each run's ratio (a ratio taken within a run, where both doors met the same
            # machine), so one run in a slow spell moves the figures less.
            "p50_ms": {n: _median(r["p50_ms"][n] for r in runs) for n in names},
            "ratio_to_vector": {n: _median(r["ratio_to_vector"][n] for r in runs) for n in names},
            "python_outside_reads_p50_ms": {
                n: _median(r["python_outside_reads_p50_ms"][n] for r in runs)
                for n in runs[0]["python_outside_reads_p50_ms"]
            },
            "load": {
                "before": runs[0]["load"]["before"],
                "after_each_pass": [x for r in runs for x in r["load"]["after_each_pass"]],
            },
        }
        if len(runs) > 1:
            summary["runs"] = runs
    finally:
        clock.close()
        driver.close()
    print(json.dumps(summary, indent=2))
    version = summary["neo4j_version"]
    # A labelled run gets its own file (the committed synthetic one is ..._synthetic-100k.json),
    # so a run without --out never overwrites the MuSiQue figures.
    suffix = f"_{args.label}" if args.label else ""
    out = args.out or (
        REPO
        / "benchmarks"
        / "results"
        / f"doors_{version}_{dt.date.today().isoformat()}{suffix}.json"
    )
    out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
