"""Which entities a question names, decided from what was matched or read (issue 37): pure.

The linker's choosing (``linking/entities.py`` describes the rules): spans matched against the
KB's keys, overlaps resolved longest first, each span's sense and the links' order. Held keys
(``linking/index.py``, a scope's ``scope_index``) are matched in memory; without them the KB is
asked by one query (``cypher/link_entities.cypher``), and ``linked_by_query`` decides from
``QueryLinks``: the question's spans (found once), the rows that query returned and, for a
trusted scope too large to hold, which linked names the scope keeps. A fact not yet handed in
raises ``MissingLinkFact`` naming it — the query's grams and full-text text, or the names to
check — and the edge (``EntityLinker.link_by_query``) reads it and asks again
(``selection/fact_rounds.py``). This module imports no driver, database layer or context (the
"Planning is pure" contract in ``pyproject.toml``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from guidedrag_graph.linking.text import (
    KIND_RANK,
    Candidate,
    KeyIndex,
    Match,
    Span,
    candidate,
    fold,
    is_stop,
    matched_spans,
    question_spans,
)

_LUCENE_SPECIAL = re.compile(r'[+\-&|!(){}\[\]^"~*?:\\/]')


@dataclass(frozen=True)
class Link:
    """One entity the question names: where, how it matched, and how common it is."""

    name: str
    span: Span
    kind: str  # exact | alias | variant | qualified
    mentions: int
    document_subject: bool
    context: bool  # a disambiguator word ("rugby") also occurs in the question
    alternate: bool = False  # another entity of a span already linked


def fulltext_query(question: str, spans: Sequence[Span]) -> str:
    """Lucene query over the question's content words; capitalised words fuzzy (~1), so names
    written without their accents ("Tekeze") still find their entity ("Tekezé")."""
    words: dict[str, bool] = {}
    for span in spans:
        if span.words != 1:
            continue
        word = _LUCENE_SPECIAL.sub(" ", span.text).strip()
        if not word or is_stop(word) or " " in word:
            continue
        key = word.casefold()
        words[key] = words.get(key, False) or (span.proper and len(word) >= 4)
    return " ".join(f"{w}~1" if fuzzy else w for w, fuzzy in words.items())


def choose(spans: Sequence[Span], candidates: Sequence[Candidate], question: str) -> list[Link]:
    """Match candidates to spans, resolve overlaps longest first, order the links best first."""
    return choose_matches(matched_spans(spans, KeyIndex(candidates)), question)


def choose_matches(matched: Sequence[tuple[Span, list[Match]]], question: str) -> list[Link]:
    """Resolve overlaps longest first and order the links best first, from each span that is
    long enough and what it matched (``matched_spans``, ``indexed_spans``)."""
    question_words: set[str] | None = None  # folded once, for the first sense qualified
    by_span: dict[tuple[int, int], list[Link]] = {}
    span_of: dict[tuple[int, int], Span] = {}
    for span, found in matched:
        for kind, sense in found:
            if sense.qualifiers and question_words is None:
                question_words = set(fold(question).split())
            link = Link(
                name=sense.name,
                span=span,
                kind=kind,
                mentions=sense.mentions,
                document_subject=sense.document_subject,
                context=bool(question_words and sense.qualifiers & question_words),
            )
            key = (span.start, span.end)
            span_of[key] = span
            by_span.setdefault(key, []).append(link)
    for links in by_span.values():
        links.sort(key=_sense_order)
    # Longest span first; at equal length the proper-name-like, then the earlier one.
    order = sorted(span_of.values(), key=lambda s: (-s.words, not s.proper, s.start))
    taken: list[Span] = []
    chosen: list[Link] = []
    alternates: list[Link] = []
    seen: set[str] = set()
    for span in order:
        if any(span.start < t.end and t.start < span.end for t in taken):
            continue
        links = [lk for lk in by_span[(span.start, span.end)] if lk.name not in seen]
        if not links:
            continue
        taken.append(span)
        chosen.append(links[0])
        seen.add(links[0].name)
        alternates.extend(Link(**{**lk.__dict__, "alternate": True}) for lk in links[1:])
    if any(link.span.proper for link in chosen):
        # A lone lower-case word ("country", "wife") is a common noun when the question also
        # writes a proper name; it is kept only as the fallback of an all-lower-case question.
        chosen = [lk for lk in chosen if lk.span.proper or lk.span.content_words > 1]
    chosen.sort(key=_link_order)
    alternates.sort(key=_link_order)
    out: list[Link] = []
    named: set[str] = set()
    for link in [*chosen, *alternates]:
        if link.name not in named:
            named.add(link.name)
            out.append(link)
    return out


def _sense_order(link: Link) -> tuple[bool, bool, int, int, str]:
    """Which entity a span means: document subject, match kind, context, popularity."""
    return (
        not link.document_subject,
        not link.context,
        KIND_RANK[link.kind],
        -link.mentions,
        link.name,
    )


def _link_order(link: Link) -> tuple[bool, bool, bool, bool, int, int, int, str]:
    """Which linked entity comes first: names written as proper names (and not as a piece of a
    longer capitalised run), entities a document is about, names the question writes in full
    (a disambiguator it does not repeat leaves the sense open: "Consulate General of the United
    States" is the Frankfurt one or the Shanghai one), rarer entities, longer spans, then the
    question's reading order."""
    return (
        not link.span.proper,
        link.span.partial,
        not link.document_subject,
        link.kind == "qualified" and not link.context,
        link.mentions,
        -link.span.content_words,
        link.span.start,
        link.name,
    )


class MissingLinkFact(LookupError):
    """The decision needed a fact it was not handed: ``kind`` "rows" (the ``link_entities``
    rows, read for ``grams`` and ``text``) or "in_scope" (which of the names ``ask`` a scope too
    large to hold keeps). The edge reads it and asks again."""

    def __init__(
        self,
        kind: Literal["rows", "in_scope"],
        *,
        grams: list[str] | None = None,
        text: str = "",
        ask: tuple[str, ...] = (),
    ) -> None:
        # the names are not shown: a message must not carry an out-of-scope name anywhere
        super().__init__(f"entity links decided without the fact {kind} ({len(ask)} names)")
        self.kind = kind
        self.grams = grams or []
        self.text = text
        self.ask = ask


@dataclass
class QueryLinks:
    """What one question's links by query are decided from: the ``question``, its spans' most
    words (``max_words``), whether a scope too large to hold narrows them (``scoped``); read at
    the edge, ``rows`` (``link_entities``'s rows) and ``in_scope`` (the linked names the scope
    keeps)."""

    question: str
    max_words: int
    scoped: bool = False
    rows: list[dict[str, Any]] | None = None
    in_scope: Sequence[str] | None = None

    @cached_property
    def spans(self) -> list[Span]:
        """The question's spans (``question_spans``), found once however many rounds."""
        return question_spans(self.question, self.max_words)

    @cached_property
    def found(self) -> list[Link]:
        """The links chosen from the rows read (``MissingLinkFact`` until they are), chosen
        once: the scope's round asks again without choosing again."""
        if self.rows is None:
            spans = self.spans
            grams = sorted({k for s in spans for k in s.keys})
            raise MissingLinkFact("rows", grams=grams, text=fulltext_query(self.question, spans))
        return choose(self.spans, [candidate(r) for r in self.rows], self.question)


def linked_by_query(facts: QueryLinks) -> list[Link]:
    """The entities ``facts.question`` names, best first, from the query's rows: none without a
    span (nothing read); scoped, only the names the scope keeps (none linked: nothing asked)."""
    if not facts.spans:
        return []
    found = facts.found
    if not facts.scoped or not found:
        return found
    if facts.in_scope is None:
        raise MissingLinkFact("in_scope", ask=tuple(lk.name for lk in found))
    kept = set(facts.in_scope)
    return [lk for lk in found if lk.name in kept]
