"""What a load wrote and how long each stage took: the same report for ``load`` and ``--bulk``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from guidedrag_graph.kb.bundle import Bundle
from guidedrag_graph.schema.presets import SchemaMapping


@dataclass
class LoadReport:
    """What a load wrote and how long each stage took; ``created_*`` are 0 on a rerun."""

    bundle: str
    schema_preset: str
    counts: dict[str, int]
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_precomputed: int = 0
    chunks_created: int = 0
    chunks_merged: int = 0
    entities_merged: int = 0
    vectors_as_bytes: bool = False
    nodes_created: int = 0
    relationships_created: int = 0
    properties_set: int = 0
    migrations_applied: list[str] = field(default_factory=list)
    # Entities the database held under another name, renamed (only with on_conflict="update"):
    # "entities.jsonl:3: entity 'euro' renamed 'Euro' -> 'Euro (currency)'".
    entities_renamed: list[str] = field(default_factory=list)
    # Documents and chunks the database held with other content, replaced (on_conflict="update"):
    # "chunks.jsonl:7: chunk 'c1' replaced (text, position differed)".
    replaced: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def chunks_per_second(self) -> float:
        seconds = self.timings.get("chunks", 0.0)
        return self.counts.get("chunks", 0) / seconds if seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": self.bundle,
            "schema_preset": self.schema_preset,
            "counts": self.counts,
            "chunks_embedded": self.chunks_embedded,
            "chunks_reused": self.chunks_reused,
            "chunks_precomputed": self.chunks_precomputed,
            "chunks_created": self.chunks_created,
            "chunks_merged": self.chunks_merged,
            "entities_merged": self.entities_merged,
            "vectors_as_bytes": self.vectors_as_bytes,
            "nodes_created": self.nodes_created,
            "relationships_created": self.relationships_created,
            "properties_set": self.properties_set,
            "migrations_applied": self.migrations_applied,
            "entities_renamed": self.entities_renamed,
            "replaced": self.replaced,
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "chunks_per_second": round(self.chunks_per_second, 1),
            "warnings": self.warnings,
        }

    @classmethod
    def after_reading(cls, bundle: Bundle, schema: SchemaMapping, started: float) -> LoadReport:
        """A report for ``bundle`` once it is read (``started``: ``perf_counter`` at the start)."""
        report = cls(
            bundle=str(bundle.path),
            schema_preset=schema.preset,
            counts=bundle.counts(),
            chunks_precomputed=len(bundle.embeddings),
            entities_merged=len(bundle.merged_entities),
        )
        report.warnings.extend(bundle.warnings)
        report.timings["read"] = time.perf_counter() - started
        return report
