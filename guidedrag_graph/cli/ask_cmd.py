"""``guidedrag retrieve``, ``ask`` and ``demo``: the pipeline at the prompt."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from guidedrag_graph.cli.common import (
    COSINE,
    TOP_K,
    driver_for,
    echo_json,
    load_settings,
    schema_of,
)
from guidedrag_graph.cli.scoped_selection import SCOPE_HELP, operator_scope
from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.identifiers import printable, quote_name
from guidedrag_graph.semantics import Semantics
from guidedrag_graph.vocabulary import PATHS, QUESTION_TYPES, RANKERS, STEERINGS, TAGGERS

if TYPE_CHECKING:
    from guidedrag_graph.kb import Question
    from guidedrag_graph.pipeline import Answer, GuidedRAG, RetrievalResult

# The pipeline is imported inside the commands so `guidedrag --help` (and the other stages'
# commands) stay fast and never depend on the retrieval stack.


def stated_semantics(
    entities: Sequence[str], relations: Sequence[str], question_type: str | None
) -> Semantics | None:
    """The semantics the flags state (None when none is: auto links them)."""
    if not entities and not relations and question_type is None:
        return None
    return Semantics(
        entities=tuple(entities),
        relations=tuple(relations),
        question_type="open" if question_type == "open" else "factoid",
        complexity=2 if len(entities) > 1 else 1,
        relational=bool(relations),
    )


def _shown_id(chunk_id: str, short: str) -> str:
    """A builder's element id or hash with its short readable form first."""
    return chunk_id if short == chunk_id else f"{short} {chunk_id}"


def _print_chunks(result: RetrievalResult, *, width: int = 110) -> None:
    for rank, chunk in enumerate(result.chunks, 1):
        member = "" if chunk.in_selection is None else (" sel" if chunk.in_selection else " U  ")
        if result.steering == "auto" and result.tier_sizes:
            member = f" {chunk.tier or 'U'}+{chunk.boost:g}"
        title = printable(str(chunk.document_title or chunk.document_id or "?"))
        click.echo(
            f"  {rank:>2}. {_shown_id(chunk.id, chunk.short_id):<28} cos={chunk.cosine:.4f} "
            f"score={chunk.score:.4f}{member}  [{title}]"
        )
        text = printable(" ".join(chunk.text.split()))
        click.echo(f"      {text[: width - 6]}{'…' if len(text) > width - 6 else ''}")


def _print_retrieval(result: RetrievalResult, *, explain: bool) -> None:
    selection = result.selection_text or "all() — every chunk (base RAG)"
    size = "all" if result.selection_size is None else str(result.selection_size)
    click.echo(printable(f"selection: {selection}  ({size} chunks)"))
    if result.linked:
        click.echo(
            "linked: "
            + ", ".join(
                printable(f"{n['span']!r} -> {n.get('entity') or n.get('relation')} ({n['match']})")
                for n in result.linked
            )
        )
    if result.unknown_names:
        click.echo(
            "names the KB lacks: " + ", ".join(printable(repr(n)) for n in result.unknown_names)
        )
    if result.tier_sizes:
        sizes = ", ".join(f"{name} {n}" for name, n in result.tier_sizes.items())
        click.echo(f"tiers (chunks): {sizes}")
    if result.empty is not None:
        click.echo(printable(f"abstained: {result.empty.message}"))
        if result.empty.suggestions:
            click.echo(f"  did you mean: {', '.join(map(quote_name, result.empty.suggestions))}")
        return
    click.echo(
        f"ranker: {result.ranker}   path: {result.path}   steering: {result.steering}   "
        f"template: {result.template}"
    )
    _print_chunks(result)
    for note in result.notes:
        click.echo(printable(f"note: {note}"))
    if explain:
        click.echo("\n-- Cypher (ranking) --")
        click.echo(result.cypher)
        click.echo("\n-- parameters (vectors elided; `guidedrag cypher --question` writes them) --")
        for name, value in sorted(result.params.items()):
            shown = "[… vector …]" if name == "query_vector" else json.dumps(value, default=str)
            click.echo(f"  {name} = {shown}")
        click.echo("\n-- timings (ms) --")
        for stage, seconds in result.timings.items():
            click.echo(f"  {stage:<16} {seconds * 1000:8.1f}")


def _resolve_semantics(
    rag: GuidedRAG,
    question: str,
    entities: Sequence[str],
    relations: Sequence[str],
    question_type: str | None,
    auto: bool,
    tagger_name: str | None,
) -> Semantics | None:
    semantics = stated_semantics(entities, relations, question_type)
    if not auto:
        return semantics
    from guidedrag_graph.linking.taggers import tagger_for
    from guidedrag_graph.selection.scope_names import selector_in_scope

    tagger = tagger_for(tagger_name or rag.settings.tagger, rag.graph)
    tags = tagger.tag(question)
    names = selector_in_scope(rag.selector, rag.scope).resolver.scope
    tags = (tags if names is None else names.keep_names(tags))[:2]  # never a name out of scope
    click.echo(f"auto-semantics ({tagger.name} tagger): {', '.join(tags) or 'no entity found'}")
    return stated_semantics(tags, relations, question_type) or Semantics()


def _filters(text: str | None) -> dict[str, Any] | None:
    """``--filters`` as a JSON object (one-line error otherwise)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(
            f"not JSON ({exc.msg} at column {exc.colno})", param_hint="--filters"
        ) from None
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--filters")
    return value


_COMMON = [
    click.argument("question"),
    click.option("--select", "selection", help="selection expression, e.g. \"entity('Rome')\""),
    click.option("--entity", "entities", multiple=True, help="an entity the question names"),
    click.option("--relation", "relations", multiple=True, help="a relation type to hop over"),
    click.option("--type", "question_type", type=click.Choice(list(QUESTION_TYPES))),
    click.option(
        "--auto-semantics",
        is_flag=True,
        help="find the entities the question names (the entity linker unless --tagger)",
    ),
    click.option("--tagger", type=click.Choice(list(TAGGERS))),
    click.option(
        "--link/--no-link",
        default=None,
        help="auto with no --entity: link the entities the question names (default: "
        "GUIDEDRAG_LINK, on)",
    ),
    click.option(
        "--filters",
        "filters",
        default=None,
        help='neo4j-graphrag metadata filters on chunk properties, as JSON: \'{"position": '
        '{"$lte": 2}}\' (they restrict the candidates)',
    ),
    click.option("-k", "--top-k", "k", type=TOP_K, help="chunks to retrieve (≥ 1)"),
    click.option("--ranker", type=click.Choice(list(RANKERS))),
    click.option(
        "--steering",
        type=click.Choice(list(STEERINGS)),
        help="auto (default): graded graph boosts over every chunk; hard: only inside the "
        "selection (the paper); soft: the selection boosted",
    ),
    click.option("--path", type=click.Choice(list(PATHS)), help="force"),
    click.option("--threshold", type=COSINE, help="minimum raw cosine (-1 to 1)"),
    click.option("--policy", type=click.Path(exists=True, dir_okay=False, path_type=Path)),
    click.option("--explain", is_flag=True, help="show the Cypher and per-stage timings"),
    click.option("--json", "as_json", is_flag=True, help="print the result as JSON"),
    click.option("--scope", "scope", default=None, help=SCOPE_HELP),
]


def _common(func: Any) -> Any:
    for decorator in reversed(_COMMON):
        func = decorator(func)
    return func


def _run(
    question: str, opts: dict[str, Any], *, ask: bool
) -> tuple[Settings, RetrievalResult | Answer]:
    if opts["selection"] and (opts["entities"] or opts["auto_semantics"]):
        raise click.UsageError("give either --select or --entity/--auto-semantics, not both")
    from guidedrag_graph.pipeline import GuidedRAG
    from guidedrag_graph.steering.policy import SteeringPolicy

    settings = load_settings()
    policy = SteeringPolicy.from_file(opts["policy"]) if opts["policy"] else None
    operator_scope(settings.scope, opts["scope"])  # a bad one is refused before connecting
    with driver_for(settings) as driver:
        rag = GuidedRAG(
            settings,
            driver=driver,
            schema=schema_of(settings),
            policy=policy,
            scope=opts["scope"],  # narrows GUIDEDRAG_SCOPE
        )
        semantics = _resolve_semantics(
            rag,
            question,
            opts["entities"],
            opts["relations"],
            opts["question_type"],
            opts["auto_semantics"],
            opts["tagger"],
        )
        kwargs: dict[str, Any] = {
            "semantics": semantics,
            "k": opts["k"],
            "ranker": opts["ranker"],
            "steering": opts["steering"],
            "path": opts["path"],
            "threshold": opts["threshold"],
            "filters": _filters(opts["filters"]),
            "link": opts["link"],
        }
        if ask:
            return settings, rag.ask(question, opts["selection"], **kwargs)
        return settings, rag.retrieve(question, opts["selection"], **kwargs)


@click.command()
@_common
def retrieve(question: str, **opts: Any) -> None:
    """Rank chunks for QUESTION inside a selection (no LLM involved)."""
    from guidedrag_graph.pipeline import RetrievalResult

    _, result = _run(question, opts, ask=False)
    assert isinstance(result, RetrievalResult)
    if opts["as_json"]:
        echo_json(result.to_dict())
        return
    _print_retrieval(result, explain=opts["explain"])


@click.command()
@_common
def ask(question: str, **opts: Any) -> None:
    """Answer QUESTION: select, rank in Neo4j, augment, generate (or show the prompt)."""
    from guidedrag_graph.pipeline import Answer

    _, answer = _run(question, opts, ask=True)
    assert isinstance(answer, Answer)
    if opts["as_json"]:
        echo_json(answer.to_dict())
        return
    _print_retrieval(answer.retrieval, explain=opts["explain"])
    if answer.abstained:
        click.echo(f"\nanswer: (abstained) {answer.reason}")
        return
    if answer.text is None:
        click.echo("\nNo LLM is set (OPENAI_BASE_URL / OPENAI_API_KEY unset): here is the")
        click.echo("retrieved context above and the augmented prompt that would be sent.\n")
        assert answer.prompt is not None
        click.echo(answer.prompt.text)
        click.echo(f"\n(≈{answer.prompt.token_estimate} prompt tokens)")
        return
    click.echo(f"\nanswer: {answer.text}")
    for citation in answer.citations:
        click.echo(
            f"  cites {citation.chunk_id} -> {citation.document_title or citation.document_id}"
        )
    if answer.invalid_citations:
        click.echo(f"  ignored citations of chunks not in the prompt: {answer.invalid_citations}")
    if answer.usage:
        click.echo(
            f"tokens: prompt {answer.usage.prompt_tokens}, completion "
            f"{answer.usage.completion_tokens}"
        )


@click.command()
@click.option("-n", "--questions", "count", default=4, show_default=True, type=int)
@click.option(
    "--bundle",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="bundle whose questions.jsonl to use (default: the sample KB)",
)
@click.option("-k", "--top-k", "k", default=5, show_default=True, type=TOP_K)
@click.option("--limit", type=int, help="tally only the first N questions (default: all)")
def demo(count: int, bundle: Path | None, k: int, limit: int | None) -> None:
    """The default GuidedRAG next to base RAG on sample questions (no LLM needed).

    The headline is what a user gets with no options (``steering="auto"``: every chunk ranked,
    boosted by graded graph tiers built from the question's semantics) against base RAG (cosine
    over every chunk). The paper's mapping (Table 2, GraphRAG* column, hard steering) is shown
    beside them. The detail is shown for the first questions, the tally for all of them.
    """
    from guidedrag_graph.evaluation.demo import DemoTally, compare, demo_questions
    from guidedrag_graph.kb import sample_kb_dir
    from guidedrag_graph.pipeline import GuidedRAG

    path = (bundle or sample_kb_dir()) / "questions.jsonl"
    if not path.exists():
        raise ConfigurationError(f"{path} does not exist: pass --bundle with a questions.jsonl")
    ordered = demo_questions(path.parent, limit)
    settings = load_settings()
    tally = DemoTally()
    with driver_for(settings) as driver:
        rag = GuidedRAG(settings, driver=driver, schema=schema_of(settings))
        for index, q in enumerate(ordered):
            show = index < count
            if show:
                _print_question(q)
            retrievals = compare(rag, q, k)
            tally.add(retrievals)
            if show:
                for r in retrievals:
                    click.echo(f"\n-- {r.label}: gold chunk {r.rank_text}")
                    _print_retrieval(r.result, explain=False)
    total, hits = tally.questions, tally.relevant
    click.echo("=" * 100)
    click.echo(
        f"over all {total} answerable questions of {path.parent.name}, gold chunk in the top "
        f"{k}: GuidedRAG default {hits['auto']}/{total} vs base RAG {hits['rag']}/{total} "
        f"(paper mapping, hard: {hits['hard']}/{total})"
    )
    click.echo(
        "(multi-hop questions: the answer often sits one step from the named entity; the "
        "default keeps every chunk in play and lifts those the graph connects to it)"
    )


def _print_question(q: Question) -> None:
    s = q.semantics
    click.echo("=" * 100)
    click.echo(f"Q {q.id}: {q.question}")
    click.echo(f"gold answer: {q.answer}   gold chunks: {', '.join(q.gold_chunk_ids)}")
    click.echo(
        f"semantics: entities={list(s.entities)} relations={list(s.relations)} "
        f"type={s.question_type} C{s.complexity}"
    )
