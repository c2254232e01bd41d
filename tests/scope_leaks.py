"""The scope leak suite (issue 35): hostile requests against a KB of two tenants, every output
scanned for tenant B. ``tests/test_scope_leaks.py`` runs a short form in CI;
``scripts/leak_suite.py`` the long one (1,000+ requests), printing the counts.

With the scope set to tenant A (``source('tenant-a')``, ``tests/tenant_kb.py``), each request
is a door (Python ``retrieve``/``ask``, LangChain, LlamaIndex, MCP tools, Browser scripts run as
printed, the CLI's ``--json``) given B's entity names, their aliases and one-edit near-misses,
B-only relation types (and forms that forgive into them), selections with ``|`` to B's
documents, ``near``/``khop``/``hop`` from the shared hubs, widening filters, ``all()``-like
selections and an MCP ``scope`` argument. Every output is scanned twice:

- structurally: chunk ids are A's, linked names and suggestions are names A's chunks mention,
  triplets are A's (evidence in A, or none and both ends A-mentioned);
- as text (JSON of results, prompts the local LLM server received, documents' text and
  metadata, Browser rows, error messages, CLI stdout and stderr), with what the request itself
  wrote taken out first (echoing the caller's own words is no leak): B's chunk ids, chunk
  markers, document ids and titles count as B chunks, B's names and aliases as B entity names,
  B-only relation types as B triplets.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import tenant_kb as T
from tests.scope_leak_requests import Request, cli_requests, requests, sample

CATEGORIES = ("B chunks", "B entity names", "B triplets", "B suggestions")


def _pattern(words: Iterable[str]) -> re.Pattern[str]:
    alternatives = sorted({re.escape(w.casefold()) for w in words}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w])")


CHUNK_MARKERS = re.compile(r"tb-chunk-\d|tb-secret-|tb-doc-\d|tenant b ledger")
NAME_MARKERS = _pattern(T.B_ONLY + T.B_ALIASES)
TYPE_MARKERS = _pattern(T.B_TYPES)
A_NAME_SET = {n.casefold() for n in T.A_NAMES}
A_TRIPLETS = {(h, t, tl) for h, t, tl, _ in T.A_RELATIONS}


@dataclass
class Figures:
    """What a run did and found: requests sent, outputs scanned, B items per category."""

    requests: int = 0
    outputs: int = 0
    found: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    doors: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def leak(self, category: str, door: str, what: str) -> None:
        self.found[category] += 1
        if len(self.examples) < 20:
            self.examples.append(f"{category} via {door}: {what[:300]}")

    @property
    def leaks(self) -> int:
        return sum(self.found.values())

    def lines(self) -> list[str]:
        doors = ", ".join(f"{d} {n}" for d, n in sorted(self.doors.items()))
        return [
            f"requests: {self.requests} ({doors})",
            f"outputs scanned: {self.outputs}",
            *(f"{c} found: {self.found[c]}" for c in CATEGORIES),
            f"seconds: {self.seconds:.1f}",
            *(f"  {e}" for e in self.examples),
        ]


# ------------------------------------------------------------------------------ the scans
def scan_text(figures: Figures, request: Request, text: str) -> None:
    """One output as text. A B marker counts unless the request itself wrote it (echoing the
    caller's own words, "no entity named 'Zoltan Reyes'", tells nothing): a leak of the very
    name the caller wrote is what the structural scans catch (linked names, suggestions,
    chunks, triplets)."""
    figures.outputs += 1
    folded = text.casefold()
    own = "\n".join(e.casefold() for e in request.echoes())
    for category, pattern in (
        ("B chunks", CHUNK_MARKERS),
        ("B entity names", NAME_MARKERS),
        ("B triplets", TYPE_MARKERS),
    ):
        for hit in pattern.finditer(folded):
            if hit.group(0) in own:
                continue
            start = max(0, hit.start() - 80)
            context = folded[start : hit.end() + 80]
            figures.leak(category, request.door, f"{hit.group(0)!r} in …{context}…")
            break


def scan_chunks(figures: Figures, request: Request, ids: Iterable[str]) -> None:
    for cid in ids:
        if cid not in T.A_CHUNK_IDS:
            figures.leak("B chunks", request.door, f"chunk {cid}")


def scan_names(figures: Figures, request: Request, names: Iterable[str], category: str) -> None:
    """Names the library offered (linked, suggested): each must be one A's chunks mention."""
    for name in names:
        if str(name).casefold() not in A_NAME_SET:
            figures.leak(category, request.door, f"name {name!r}")


def scan_triplets(figures: Figures, request: Request, triplets: Iterable[Any]) -> None:
    for t in triplets:
        if (t.head, t.type, t.tail) not in A_TRIPLETS:
            figures.leak("B triplets", request.door, str(t))


def scan_result(figures: Figures, request: Request, result: Any) -> None:
    """A ``RetrievalResult``: its chunks, linked names, suggestions, and all of it as JSON."""
    scan_chunks(figures, request, (c.id for c in result.chunks))
    scan_names(
        figures, request, (d["entity"] for d in result.linked if "entity" in d), "B entity names"
    )
    if result.empty is not None:
        scan_names(figures, request, result.empty.suggestions, "B suggestions")
    scan_text(figures, request, json.dumps(result.to_dict(), default=str))


def scan_answer(figures: Figures, request: Request, answer: Any, prompts: list[str]) -> None:
    scan_result(figures, request, answer.retrieval)
    if answer.prompt is not None:
        scan_triplets(figures, request, answer.prompt.triplets)
        scan_chunks(figures, request, answer.prompt.chunk_ids)
        scan_text(figures, request, answer.prompt.text)
    scan_text(figures, request, json.dumps(dataclasses.asdict(answer), default=str))
    for prompt in prompts:  # what the LLM server received
        scan_text(figures, request, prompt)


def scan_error(figures: Figures, request: Request, exc: BaseException) -> None:
    scan_text(figures, request, f"{type(exc).__name__}: {exc}")


# ------------------------------------------------------------------------------ the doors
@dataclass
class Doors:
    """What the requests run against: the scoped pipelines, adapters, the MCP server, the LLM
    server's received prompts, and how to run the CLI."""

    rag: Any  # GuidedRAG scoped to A, with the local LLM configured
    arag: Any  # its async twin (aopen), for MCP's retrieve/ask
    llm: Any  # tests.llm_server.LLMServer
    loop: asyncio.AbstractEventLoop
    run_cli: Callable[[list[str]], tuple[int, str]] | None = None
    _mcp: Any = None
    _langchain: Any = None
    _llamaindex: Any = None

    def mcp(self) -> Any:
        if self._mcp is None:
            from guidedrag_graph.cli.mcp_server import build_server

            self._mcp = build_server(self.rag, self.arag)
        return self._mcp

    def langchain(self) -> Any:
        if self._langchain is None:
            from guidedrag_graph.integrations.langchain import GuidedLangChainRetriever

            # the adapter's own trusted scope= over an unscoped pipeline
            self._langchain = GuidedLangChainRetriever(rag=self.rag.scoped(None), scope=T.SCOPE_A)
        return self._langchain

    def llamaindex(self) -> Any:
        if self._llamaindex is None:
            from guidedrag_graph.integrations.llamaindex import GuidedLlamaIndexRetriever

            self._llamaindex = GuidedLlamaIndexRetriever(self.rag)
        return self._llamaindex


def run_one(doors: Doors, figures: Figures, request: Request) -> None:
    """Send ``request`` through its door and scan everything that comes back."""
    figures.requests += 1
    figures.doors[request.door] += 1
    args = dict(request.args)
    try:
        if request.door == "retrieve":
            scan_result(
                figures, request, doors.rag.retrieve(args.pop("question"), **_options(args))
            )
        elif request.door == "ask":
            before = len(doors.llm.requests)
            answer = doors.rag.ask(args.pop("question"), **_options(args))
            prompts = [doors.llm.prompt_text(i) for i in range(before, len(doors.llm.requests))]
            scan_answer(figures, request, answer, prompts)
        elif request.door == "mcp":
            _mcp(doors, figures, request)
        elif request.door == "langchain":
            docs = doors.langchain().invoke(args.pop("question"), **_options(args))
            scan_chunks(figures, request, (d.metadata["chunk_id"] for d in docs))
            for d in docs:
                scan_text(figures, request, d.page_content + json.dumps(d.metadata, default=str))
            scan_text(figures, request, str(getattr(docs, "reason", "")))
        elif request.door == "llamaindex":
            from llama_index.core.schema import QueryBundle

            retriever = doors.llamaindex()
            question = args.pop("question")
            nodes = (
                retriever.retrieve(QueryBundle(question))
                if not args
                else retriever.retrieve(question, **_options(args))
            )
            for n in nodes:
                scan_chunks(figures, request, [n.node.node_id])
                scan_text(figures, request, n.node.get_content() + json.dumps(n.node.metadata))
        elif request.door == "browser":
            _browser(doors, figures, request)
        elif request.door == "cli" and doors.run_cli is not None:
            _code, out = doors.run_cli(list(args["argv"]))
            scan_text(figures, request, out)
    except Exception as exc:  # a refusal is an output too: its words are scanned
        scan_error(figures, request, exc)


def _options(args: dict[str, Any]) -> dict[str, Any]:
    from guidedrag_graph.semantics import Semantics

    out = dict(args)
    if "semantics" in out:
        out["semantics"] = Semantics(**out["semantics"])
    if "selection" in out:
        return {"selection": out.pop("selection"), **out}
    return out


def _mcp(doors: Doors, figures: Figures, request: Request) -> None:
    tool, arguments = request.args["tool"], request.args["args"]
    result = doors.loop.run_until_complete(doors.mcp().call_tool(tool, arguments))
    content = getattr(result, "structured_content", None)
    if tool == "suggest_entities" and isinstance(content, dict):
        scan_names(figures, request, content.get("result") or [], "B suggestions")
    if isinstance(content, dict):
        for chunk in content.get("chunks") or []:
            scan_chunks(figures, request, [chunk["chunk_id"]])
        scan_text(figures, request, json.dumps(content, default=str))
    for part in getattr(result, "content", None) or []:
        scan_text(figures, request, str(getattr(part, "text", part)))


def _browser(doors: Doors, figures: Figures, request: Request) -> None:
    """``guidedrag cypher``'s script for the expression, inside the scope, run as printed."""
    from guidedrag_graph.cli.scoped_selection import prepare_in_scope
    from guidedrag_graph.cli.select_cmd import browser_script
    from guidedrag_graph.selection import parse
    from tests.template_scripts import as_written, browser_params

    rag = doors.rag
    expr = parse(request.args["expression"], rag.selector.limits)
    prepared = prepare_in_scope(rag.selector, expr, rag.scope).prepared
    script = browser_script(prepared, rag.schema)
    scan_text(figures, request, script)
    driver = rag.graph.driver
    params = browser_params(driver, script)
    for statement in as_written(script):
        rows = driver.execute_query(statement, params, routing_="r").records
        ids = [str(r["id"]) for r in rows if "id" in r.keys()]  # noqa: SIM118 (values in a Record)
        scan_chunks(figures, request, ids)
        scan_text(figures, request, json.dumps([dict(r) for r in rows], default=str))


def run(doors: Doors, batch: list[Request]) -> Figures:
    figures = Figures()
    started = time.monotonic()
    for request in batch:
        run_one(doors, figures, request)
    figures.seconds = time.monotonic() - started
    return figures


def load_if_needed(driver: Any, settings: Any, path: Path) -> None:
    """Load the two tenants unless the database holds exactly them."""
    record = driver.execute_query(
        "CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks } "
        "CALL () { MATCH (c:Chunk) WHERE c.id STARTS WITH 'tb-chunk-' RETURN count(c) AS b } "
        "RETURN chunks, b"
    ).records[0]
    if record["chunks"] != len(T.A_CHUNKS) + len(T.B_CHUNKS) or record["b"] != len(T.B_CHUNKS):
        T.load(driver, settings, path)


@contextmanager
def opened_doors(settings: Any, driver: Any, *, cli_cwd: Path | None = None) -> Iterator[Doors]:
    """The scoped pipelines (sync and async), the local LLM server and the CLI runner, over
    the two-tenant KB already loaded; closed on exit."""
    from guidedrag_graph.embeddings import embedder_for
    from guidedrag_graph.pipeline import GuidedRAG
    from tests.cli_run import clean_env
    from tests.cli_run import run_cli as cli
    from tests.llm_server import llm_server

    with llm_server() as server:
        llm = settings.model_copy(
            update={"openai_base_url": server.base_url, "llm_model": "test-model"}
        )
        embedder = embedder_for(llm)
        rag = GuidedRAG(llm, driver=driver, embedder=embedder, scope=T.SCOPE_A)
        loop = asyncio.new_event_loop()
        arag = loop.run_until_complete(GuidedRAG.aopen(llm, embedder=embedder, scope=T.SCOPE_A))
        env = clean_env(
            {
                "NEO4J_URI": settings.neo4j_uri,
                "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
                "GUIDEDRAG_SCOPE": T.SCOPE_A,  # the deployment's scope
                "OPENAI_BASE_URL": server.base_url,
                "GUIDEDRAG_LLM_MODEL": "test-model",
                "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
            }
        )

        def run_cli(argv: list[str]) -> tuple[int, str]:
            done = cli(argv, env, cwd=cli_cwd or Path.cwd(), timeout=120)
            return done.returncode, done.stdout + "\n" + done.stderr

        try:
            yield Doors(rag, arag, server, loop, run_cli if cli_cwd is not None else None)
        finally:
            loop.run_until_complete(arag.aclose())
            loop.close()


__all__ = ["Figures", "Request", "cli_requests", "opened_doors", "requests", "run", "sample"]
