"""Entity linking: which KB entities a question names, by matching its spans to entity names.

Why not Lucene scores or embeddings (the other taggers)? A question names an entity by writing
its name, so the most reliable signal is *the whole name occurs in the question*. The linker:

1. cuts the question into word n-grams (up to ``max_words`` words), each normalised with
   :func:`~guidedrag_graph.schema.name_key`, with a trailing possessive dropped ("Ada
   Lovelace's" -> "ada lovelace");
2. asks Neo4j once (``cypher/link_entities.cypher``) for the entities whose ``name_key`` equals
   an n-gram or is an n-gram plus a disambiguator ("mercury (planet)", "paris, texas"), index
   seeks only; aliases and accent/punctuation variants come from the full-text index and are
   verified here against the n-grams, so nothing fuzzy is ever accepted on its own;
3. resolves overlapping spans longest first (so "New York City" hides "York"), and orders what
   is left (:func:`_link_order`): names the question writes like proper names (capitalised)
   before lower-case words, entities a document is about, names written in full, then rarer
   entities (fewer mentions) first, then longer spans.

Within one span, an entity a document is titled after (the entity the document is about) is
preferred over a bare homonym, the exact name over an alias over an accent/punctuation variant
over a disambiguated name, a disambiguator the question's own words repeat ("rugby" in "David
Jones (rugby)") before one they do not, and then the more-mentioned sense (the usual prior of
entity linking). Other entities of a chosen span follow all the chosen ones, as alternates.

Spans made only of stop words, and names shorter than three characters (unless the question
writes them as an acronym, "US"), are never linked. Every value reaches Neo4j as a parameter.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guidedrag_graph import templates
from guidedrag_graph.context import GraphContext
from guidedrag_graph.schema import name_key

# English function words and question words: spans made only of these are never entity names.
STOP_WORDS: frozenset[str] = frozenset(
    {
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
        "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
        "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "else",
        "ever", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
        "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is",
        "it", "its", "itself", "just", "last", "let", "like", "many", "me", "might", "more", "most",
        "much", "must", "my", "myself", "near", "next", "no", "nor", "not", "now", "of", "off",
        "on", "once", "one", "only", "or", "other", "our", "ours", "out", "over", "own", "part",
        "same", "she", "should", "since", "so", "some", "such", "than", "that", "the", "their",
        "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
        "under", "until", "up", "upon", "us", "very", "was", "we", "were", "what", "when", "where",
        "whether", "which", "while", "who", "whom", "whose", "why", "will", "with", "within",
        "without", "would", "yet", "you", "your", "yours"
    }
)  # fmt: skip

_TOKEN = re.compile(r"\w+(?:['’]\w+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s?$")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_PAREN = re.compile(r"^(.+?) \(([^()]+)\)$")
_LUCENE_SPECIAL = re.compile(r'[+\-&|!(){}\[\]^"~*?:\\/]')

KIND_RANK = {"exact": 0, "alias": 1, "variant": 2, "qualified": 3}


def fold(text: str) -> str:
    """Accent-, case- and punctuation-insensitive key: "Aschenbrödel" == "aschenbrodel"."""
    decomposed = unicodedata.normalize("NFKD", name_key(text))
    letters = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(_NON_WORD.sub(" ", letters).split())


@dataclass(frozen=True)
class Span:
    """Words ``start``..``end`` (exclusive) of the question, with the keys it may match."""

    start: int
    end: int
    text: str
    keys: frozenset[str]  # name_key forms (as written, and without a possessive)
    folded: frozenset[str]  # fold() forms
    proper: bool  # written like a proper name (a capitalised word that is not a stop word)
    partial: bool  # part of a longer run of capitalised words ("State" in "Golden State")
    content_words: int  # words that are not stop words

    @property
    def words(self) -> int:
        return self.end - self.start


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


@dataclass(frozen=True)
class _Candidate:
    name: str
    keys: frozenset[str]
    folded: frozenset[str]
    base_keys: frozenset[str]  # disambiguator stripped: "mercury" for "mercury (planet)"
    base_folded: frozenset[str]
    qualifiers: frozenset[str]  # the disambiguators' folded words
    mentions: int
    document_subject: bool


def _qualified(key: str) -> list[tuple[str, str]]:
    """(base, disambiguator) readings of a name: "mercury (planet)" -> ("mercury", "planet"),
    "black hawk township, jefferson county, iowa" -> ("black hawk township", "jefferson ...")."""
    out: list[tuple[str, str]] = []
    paren = _PAREN.match(key)
    if paren:
        out.append((paren.group(1), paren.group(2)))
    head, sep, rest = key.partition(", ")
    if sep and head and rest:
        out.append((head, rest))
    return out


def _candidate(row: dict[str, Any]) -> _Candidate:
    name = str(row["name"])
    keys = {str(row.get("name_key") or name_key(name)), *(str(k) for k in row["alias_keys"] or [])}
    bases: set[str] = set()
    qualifiers: set[str] = set()
    for key in keys:
        for base, qualifier in _qualified(key):
            bases.add(base)
            qualifiers.update(fold(qualifier).split())
    return _Candidate(
        name=name,
        keys=frozenset(keys),
        folded=frozenset(fold(k) for k in keys),
        base_keys=frozenset(bases),
        base_folded=frozenset(fold(b) for b in bases),
        qualifiers=frozenset(qualifiers - STOP_WORDS),
        mentions=int(row["mentions"]),
        document_subject=bool(row["document_subject"]),
    )


def _stop(word: str) -> bool:
    """A function word, unless written as an acronym ("US" is not "us")."""
    return word.casefold() in STOP_WORDS and not (len(word) > 1 and word.isupper())


def _capitalised(word: str) -> bool:
    return word[0].isupper() and not _stop(word)


def question_spans(question: str, max_words: int = 12) -> list[Span]:
    """Every span of up to ``max_words`` words that could be a name (not only stop words)."""
    tokens = list(_TOKEN.finditer(question))
    words = [t.group(0) for t in tokens]
    stop = [_stop(w) for w in words]
    # Words joined to the next by nothing but a space or a hyphen ("Golden State", "Pan-African").
    joined = [
        question[tokens[k].end() : tokens[k + 1].start()] in (" ", "-")
        for k in range(len(tokens) - 1)
    ]
    spans: list[Span] = []
    for i, first in enumerate(tokens):
        for j in range(i + 1, min(len(tokens), i + max_words) + 1):
            content = stop[i:j].count(False)
            if not content:
                continue
            text = question[first.start() : tokens[j - 1].end()]
            forms = {text}
            if _POSSESSIVE.search(words[j - 1]):
                forms.add(_POSSESSIVE.sub("", text))
            keys = frozenset(k for k in (name_key(f) for f in forms) if k)
            partial = (i > 0 and joined[i - 1] and _capitalised(words[i - 1])) or (
                j < len(tokens) and joined[j - 1] and _capitalised(words[j])
            )
            spans.append(
                Span(
                    start=i,
                    end=j,
                    text=text,
                    keys=keys,
                    folded=frozenset(fold(k) for k in keys),
                    proper=any(_capitalised(w) for w in words[i:j]),
                    partial=bool(partial),
                    content_words=content,
                )
            )
    return spans


def _long_enough(span: Span) -> bool:
    """Names under three characters only when written as an acronym ("US", "EU")."""
    if min(len(k) for k in span.keys) >= 3:
        return True
    letters = [ch for ch in span.text if ch.isalpha()]
    return len(letters) >= 2 and all(ch.isupper() for ch in letters)


class _Index:
    """The candidates by each key a span may match, so matching is lookups, not a product."""

    def __init__(self, candidates: Sequence[_Candidate]) -> None:
        self.by_kind: dict[str, dict[str, list[_Candidate]]] = {k: {} for k in KIND_RANK}
        for cand in candidates:
            own = name_key(cand.name)
            for kind, keys in (
                ("exact", {k for k in cand.keys if k == own}),
                ("alias", {k for k in cand.keys if k != own}),
                ("variant", cand.folded),
                ("qualified", cand.base_keys | cand.base_folded),
            ):
                for key in keys:
                    self.by_kind[kind].setdefault(key, []).append(cand)

    def matches(self, span: Span) -> list[tuple[str, _Candidate]]:
        """(kind, candidate) pairs, each candidate once, with its strongest kind."""
        out: dict[str, tuple[str, _Candidate]] = {}
        for kind, keys in (
            ("exact", span.keys),
            ("alias", span.keys),
            ("variant", span.folded),
            ("qualified", span.keys | span.folded),
        ):
            for key in keys:
                for cand in self.by_kind[kind].get(key, []):
                    out.setdefault(cand.name, (kind, cand))
        return list(out.values())


def fulltext_query(question: str, spans: Sequence[Span]) -> str:
    """Lucene query over the question's content words; capitalised words fuzzy (~1), so names
    written without their accents ("Tekeze") still find their entity ("Tekezé")."""
    words: dict[str, bool] = {}
    for span in spans:
        if span.words != 1:
            continue
        word = _LUCENE_SPECIAL.sub(" ", span.text).strip()
        if not word or _stop(word) or " " in word:
            continue
        key = word.casefold()
        words[key] = words.get(key, False) or (span.proper and len(word) >= 4)
    return " ".join(f"{w}~1" if fuzzy else w for w, fuzzy in words.items())


def choose(spans: Sequence[Span], candidates: Sequence[_Candidate], question: str) -> list[Link]:
    """Match candidates to spans, resolve overlaps longest first, order the links best first."""
    question_words = set(fold(question).split())
    by_span: dict[tuple[int, int], list[Link]] = {}
    span_of: dict[tuple[int, int], Span] = {}
    index = _Index(candidates)
    for span in spans:
        if not _long_enough(span):
            continue
        for kind, cand in index.matches(span):
            link = Link(
                name=cand.name,
                span=span,
                kind=kind,
                mentions=cand.mentions,
                document_subject=cand.document_subject,
                context=bool(cand.qualifiers & question_words),
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
    for link in [*chosen, *alternates]:
        if link.name not in {lk.name for lk in out}:
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


class EntityLinker:
    """The ``linker`` tagger: names and aliases of KB entities found as spans of the question."""

    name = "linker"

    def __init__(
        self,
        graph: GraphContext,
        *,
        max_words: int = 12,
        fulltext_limit: int = 50,
        mention_cap: int = 1000,
    ) -> None:
        self.graph = graph
        self.max_words = max_words
        self.fulltext_limit = fulltext_limit
        self.mention_cap = mention_cap

    def link(self, question: str) -> list[Link]:
        """Every entity the question names, best first, with how each one matched."""
        spans = question_spans(question, self.max_words)
        if not spans:
            return []
        grams = sorted({k for s in spans for k in s.keys})
        text = fulltext_query(question, spans)
        rows = self.graph.read(
            templates.query("link_entities", self.graph.schema),
            {
                "grams": grams,
                "index_name": self.graph.settings.entity_fulltext_index_name,
                # Lucene rejects an empty query; a word no name contains finds nothing.
                "query_text": text or "guidedrag_no_word",
                "fulltext_limit": self.fulltext_limit,
                "mention_cap": self.mention_cap,
            },
        )
        return choose(spans, [_candidate(r) for r in rows], question)

    def tag(self, question: str) -> list[str]:
        """One entity per linked span, best first (other senses of a span are left out)."""
        return [link.name for link in self.link(question) if not link.alternate]
