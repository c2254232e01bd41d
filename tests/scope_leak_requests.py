"""The hostile requests of the scope leak suite (``tests/scope_leaks.py``): B's names, their
aliases and one-edit near-misses, B-only relation types and forms that forgive into them,
selections with ``|`` to B, walks from the shared hubs, widening filters, ``all()``-like
selections, MCP arguments (``scope`` included), Browser scripts and the CLI's doors."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from guidedrag_graph.schema.presets import relation_type_name
from tests import tenant_kb as T

_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


@dataclass(frozen=True)
class Request:
    """One hostile request: the door, what it sends, and every string the caller wrote."""

    door: str
    args: dict[str, Any]

    def echoes(self) -> list[str]:
        """The caller's own words (and the forms the library writes them back in): taken out of
        outputs before the text scan."""
        out: list[str] = []
        for value in _strings(self.args):
            out.append(value)
            out.extend(m.group(1) or m.group(2) or "" for m in _QUOTED.finditer(value))
        out += [relation_type_name(v) for v in out if len(v) < 200]
        return sorted({v for v in out if len(v) >= 3}, key=len, reverse=True)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


# ------------------------------------------------------------------------------ the requests
def near_miss(name: str, rng: random.Random) -> str:
    """``name`` one edit away (a letter changed, dropped or doubled)."""
    i = rng.randrange(1, len(name))
    edit = rng.choice(("change", "drop", "double"))
    if edit == "drop":
        return name[:i] + name[i + 1 :]
    if edit == "double":
        return name[:i] + name[i] + name[i:]
    letter = rng.choice("aeiouxz")
    return name[:i] + letter + name[i + 1 :]


B_RELATION_FORMS = [
    *T.B_TYPES,
    "smuggles to",
    "bribe",
    "launders",
    "Smuggled_To",
    "BRIBES",
    "launder for",
    "SMUGGLE_TO",
]
HOSTILE_SELECTIONS = [
    "source('tenant-b')",
    "all()",
    "all() | source('tenant-b')",
    "source('tenant-a') | source('tenant-b')",
    "document('tb-doc-0') | document('tb-doc-1')",
    "document('Tenant B ledger 0')",
    "entity('Northwind Holdings') | document('tb-doc-0')",
    "chunks('tb-chunk-0', 'tb-chunk-1', 'ta-chunk-0')",
    "near('Port Vela', 2)",
    "near('Northwind Holdings', 3)",
    "khop('Northwind Holdings', 2)",
    "khop('Ilsa Marr', 3)",
    "hop('Port Vela', ['SMUGGLES_TO'])",
    "hop('Northwind Holdings', ['BRIBED', 'LAUNDERS_FOR'], 2)",
    "hop('Northwind Holdings', ['SUPPLIES'], 2, 'in')",
    "type('Company')",
    "type('Person')",
    "all() - source('tenant-a')",
    "entity('Port Vela') ^ source('tenant-b')",
    "(entity('Port Vela') | entity('River Osk')) - entity('Ardent Mills')",
]
WIDENING_FILTERS: list[dict[str, Any]] = [
    {"document_id": {"$in": T.B_DOC_IDS}},
    {"source": "tenant-b"},
    {"id": {"$in": T.B_CHUNK_IDS}},
    {"position": {"$gte": 0}},
    {"$or": [{"position": {"$gte": 0}}, {"document_id": "tb-doc-0"}]},
]
QUESTIONS = [
    "Who is {b}?",
    "What does {b} supply to {hub}?",
    "Tell me about {b} and {hub}.",
    "how is {b} related to {hub}",
    "Which company did {hub} bribe?",
    "Who smuggles to {hub}?",
    "Does {b} launder money for {hub}?",
]


def requests(rng: random.Random) -> list[Request]:
    """Every hostile request of the long form (the short form samples them)."""
    b_names = T.B_ONLY + T.B_ALIASES
    misses = [near_miss(b, rng) for b in b_names for _ in range(2)]
    names = b_names + misses + [b.lower() for b in T.B_OWN] + [b.upper() for b in T.B_NEAR]
    hubs = T.HUBS
    out: list[Request] = []
    add = out.append
    for name in names:
        hub = rng.choice(hubs)
        for steering in ("auto", "hard", "soft"):
            add(
                Request(
                    "retrieve",
                    {
                        "question": f"What about {name}?",
                        "semantics": {"entities": [name]},
                        "steering": steering,
                    },
                )
            )
        add(
            Request(
                "retrieve",
                {"question": f"{name} and {hub}", "semantics": {"entities": [hub, name]}},
            )
        )
        add(Request("retrieve", {"question": rng.choice(QUESTIONS).format(b=name, hub=hub)}))
        add(
            Request(
                "retrieve", {"question": "x", "selection": f"entity('{name}')", "steering": "hard"}
            )
        )
        add(
            Request(
                "retrieve",
                {
                    "question": "x",
                    "selection": f"entity('{hub}') | entity('{name}')",
                    "steering": "soft",
                },
            )
        )
        add(Request("ask", {"question": rng.choice(QUESTIONS).format(b=name, hub=hub)}))
        add(Request("ask", {"question": f"Who is {name}?", "semantics": {"entities": [name]}}))
        add(Request("mcp", {"tool": "suggest_entities", "args": {"text": name}}))
        add(
            Request(
                "mcp",
                {
                    "tool": "suggest_entities",
                    "args": {"text": f"Who is {name}?", "from_question": True},
                },
            )
        )
        add(
            Request(
                "mcp",
                {"tool": "retrieve", "args": {"question": f"Who is {name}?", "entities": [name]}},
            )
        )
        add(Request("mcp", {"tool": "select", "args": {"expression": f"entity('{name}')"}}))
        add(Request("langchain", {"question": f"Who is {name}?"}))
        add(Request("llamaindex", {"question": f"{name} and {hub}"}))
        add(Request("browser", {"expression": f"entity('{name}') | entity('{hub}')"}))
    for form in B_RELATION_FORMS:
        for hub in hubs:
            for steering in ("auto", "hard"):
                add(
                    Request(
                        "retrieve",
                        {
                            "question": f"Who {form.lower()} {hub}?",
                            "semantics": {
                                "entities": [hub],
                                "relations": [form],
                                "relational": True,
                            },
                            "steering": steering,
                        },
                    )
                )
            add(
                Request(
                    "retrieve",
                    {"question": "x", "selection": f"hop('{hub}', ['{form}'])", "steering": "hard"},
                )
            )
            add(
                Request(
                    "ask",
                    {
                        "question": f"Who {form.lower()} {hub}?",
                        "semantics": {"entities": [hub], "relations": [form], "relational": True},
                    },
                )
            )
            add(
                Request(
                    "mcp",
                    {
                        "tool": "retrieve",
                        "args": {
                            "question": f"Who {form.lower()} {hub}?",
                            "entities": [hub],
                            "relations": [form],
                        },
                    },
                )
            )
    for selection in HOSTILE_SELECTIONS:
        for steering in ("hard", "soft", "auto"):
            add(
                Request(
                    "retrieve",
                    {
                        "question": "Who supplies Northwind Holdings?",
                        "selection": selection,
                        "steering": steering,
                    },
                )
            )
        add(
            Request(
                "ask",
                {
                    "question": "What happened at Port Vela?",
                    "selection": selection,
                    "steering": "soft",
                },
            )
        )
        add(Request("mcp", {"tool": "select", "args": {"expression": selection}}))
        add(Request("mcp", {"tool": "cypher", "args": {"expression": selection}}))
        add(Request("browser", {"expression": selection}))
    for hub in hubs:
        for filters in WIDENING_FILTERS:
            add(Request("retrieve", {"question": f"What about {hub}?", "filters": filters}))
            add(
                Request(
                    "mcp",
                    {
                        "tool": "retrieve",
                        "args": {"question": f"What about {hub}?", "filters": filters},
                    },
                )
            )
        add(
            Request(
                "ask",
                {
                    "question": f"How is {hub} connected to the others?",
                    "semantics": {"entities": [hub], "relational": True},
                },
            )
        )
        add(
            Request(
                "mcp",
                {
                    "tool": "retrieve",
                    "args": {"question": f"Tell me about {hub}", "scope": "source('tenant-b')"},
                },
            )
        )
        add(
            Request(
                "mcp",
                {"tool": "ask", "args": {"question": f"Tell me about {hub}", "scope": "all()"}},
            )
        )
        add(
            Request(
                "langchain",
                {
                    "question": f"Who is at {hub}?",
                    "selection": "source('tenant-b')",
                    "steering": "soft",
                },
            )
        )
        add(
            Request(
                "llamaindex",
                {
                    "question": f"Who is at {hub}?",
                    "semantics": {"entities": [hub], "relations": ["BRIBED"]},
                },
            )
        )
    return out


def cli_requests() -> list[Request]:
    """The CLI's ``--json`` doors (a process each: the short form runs a few)."""
    return [
        Request("cli", {"argv": ["retrieve", "Who is Zoltan Reyes?", "--json"]}),
        Request("cli", {"argv": ["retrieve", "x", "--entity", "Teodor Vas", "--json"]}),
        Request(
            "cli",
            {
                "argv": [
                    "ask",
                    "Who bribed Ilsa Marr?",
                    "--entity",
                    "Northwind Holdings",
                    "--relation",
                    "BRIBED",
                    "--json",
                ]
            },
        ),
        Request(
            "cli", {"argv": ["select", "entity('Ardent Mill') | source('tenant-b')", "--json"]}
        ),
        Request(
            "cli", {"argv": ["cypher", "khop('Northwind Holdings', 2) | document('tb-doc-0')"]}
        ),
        Request("cli", {"argv": ["ask", "Who smuggles to Port Vela?", "--auto-semantics"]}),
    ]


def sample(rng: random.Random, everything: list[Request], size: int) -> list[Request]:
    """``size`` requests, every door and kind represented (a stratified draw by door)."""
    if size >= len(everything):
        return everything
    by_door: dict[str, list[Request]] = {}
    for r in everything:
        by_door.setdefault(r.door, []).append(r)
    share = max(1, size // len(by_door))
    out: list[Request] = []
    for door_requests in by_door.values():
        out += rng.sample(door_requests, min(share, len(door_requests)))
    return out
