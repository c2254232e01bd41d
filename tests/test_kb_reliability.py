"""Short form of the load kill suite (scripts/reliability_load.py): 2k chunks, 2 loader kills."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from guidedrag_graph.kb import read_bundle, sample_kb_dir
from guidedrag_graph.kb.synthetic import SyntheticSpec, write_synthetic_bundle
from tests.conftest import REPO_ROOT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "reliability_load", REPO_ROOT / "scripts" / "reliability_load.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_sigkilled_loads_rerun_to_the_clean_counts(
    migrated_db: Driver, settings: Settings, tmp_path: Path
) -> None:
    suite_mod = _script()
    bundle = tmp_path / "bundle"
    write_synthetic_bundle(bundle, SyntheticSpec(2000), centres_dir=sample_kb_dir())
    suite = suite_mod.Suite(
        settings.neo4j_uri, settings.neo4j_password.get_secret_value(), bundle, None
    )
    lines: list[str] = []
    outcomes = suite_mod.run(suite, kills=2, kill_server=False, seed=3, log=lines.append)
    assert len(outcomes) == 2, lines
    for outcome in outcomes:
        assert outcome.exact, outcome.line()
    # The clean load itself matches the bundle, so "exact" means the bundle's counts.
    counts = read_bundle(bundle).counts()
    final = outcomes[-1].counts
    assert (final["chunks"], final["chunk_ids"], final["mentions"], final["relations"]) == (
        counts["chunks"], counts["chunks"], counts["mentions"], counts["relations"]
    )  # fmt: skip
    assert final["chunks_without_embedding"] == 0
    # At least one kill landed mid-load (some but not all chunks written).
    assert any(0 < o.partial_chunks < counts["chunks"] for o in outcomes), lines
