"""What an evaluation records: one row per retrieval, one per tagging, and the run's metadata.

Plain dataclasses with a versioned JSON form, kept apart from the harness so reports and plots
can be rebuilt from ``results.json`` without importing the pipeline or touching a database.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RESULTS_FORMAT = "guidedrag-eval/1"


@dataclass
class Row:
    """One retrieval: a question (or one of its paraphrases) under one approach."""

    set: str  # "answerable" | "unanswerable"
    question_id: str
    variant: int  # 0 = the question as written, 1.. = its paraphrases
    approach: str
    configuration: str
    cell: str  # Table 2 symbol of the selection that ran
    selection: str  # DSL text of the selection
    steering: str
    entities: list[str]
    selection_size: int | None  # chunks in the selection (the corpus size for all())
    empty: str | None  # why the pipeline abstained: "<kind>: <term>"
    ranked: list[str]
    cosines: list[float]  # raw cosine; Neo4j's score is (1 + cos) / 2, so it is not stored
    in_selection: list[bool]
    hit_position: int | None  # answerable only; k + 1 = miss
    all_gold_recall: float | None
    latency_s: float
    timings: dict[str, float] = field(default_factory=dict)
    note: str | None = None
    # Is the answer chunk inside the selection at all? (None: not measured, e.g. U.) Separates
    # "the selection missed it" from "ranking inside the selection missed it".
    gold_in_selection: bool | None = None
    path: str | None = None  # physical ranking path: exact / index / search_in (None: abstained)
    # A bare question's linked relation types ("span -> TYPE (match)") and the spans that look
    # like names and match no entity (guidedrag-question; empty elsewhere).
    linked_relations: list[str] = field(default_factory=list)
    unknown_names: list[str] = field(default_factory=list)


@dataclass
class Tagging:
    """One tagger's output for one question (Table 3)."""

    tagger: str
    question_id: str
    gold: list[str]
    tags: list[str]
    latency_s: float


@dataclass
class EvalRun:
    """Everything one evaluation recorded; ``results.json`` is this, as JSON."""

    meta: dict[str, Any]
    rows: list[Row]
    taggings: list[Tagging]
    tagger_errors: dict[str, str]
    warnings: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RESULTS_FORMAT,
            "meta": self.meta,
            "rows": [asdict(r) for r in self.rows],
            "taggings": [asdict(t) for t in self.taggings],
            "tagger_errors": self.tagger_errors,
            "warnings": self.warnings,
        }

    def write_json(self, path: Path) -> None:
        """Valid JSON with one row per line: small enough to commit, readable in a diff."""
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.to_json()

        def compact(value: Any) -> str:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

        head = {k: v for k, v in data.items() if k not in ("rows", "taggings")}
        lines = ["{"]
        lines += [f"{compact(k)}:{compact(v)}," for k, v in head.items()]
        for key in ("rows", "taggings"):
            items = data[key]
            lines.append(f"{compact(key)}:[")
            lines += [
                compact(item) + ("," if i < len(items) - 1 else "") for i, item in enumerate(items)
            ]
            lines.append("]," if key == "rows" else "]")
        lines.append("}")
        path.write_text("\n".join(lines) + "\n", "utf-8")

    @staticmethod
    def from_json(data: dict[str, Any]) -> EvalRun:
        if data.get("format") != RESULTS_FORMAT:
            raise ValueError(f"not a {RESULTS_FORMAT} results file (format={data.get('format')!r})")
        return EvalRun(
            meta=data["meta"],
            rows=[Row(**{k: v for k, v in r.items() if k != "scores"}) for r in data["rows"]],
            taggings=[Tagging(**t) for t in data["taggings"]],
            tagger_errors=dict(data.get("tagger_errors", {})),
            warnings=list(data.get("warnings", [])),
        )

    @staticmethod
    def read_json(path: Path) -> EvalRun:
        return EvalRun.from_json(json.loads(path.read_text("utf-8")))
