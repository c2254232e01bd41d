"""Each user choice is defined once and read from there: the settings' type, the CLI's choices and
the objects with behaviour cannot drift apart (a preset added to ``schema.PRESETS`` only, or a
ranker added to the vocabulary only, fails here or at import). No Neo4j needed."""

from __future__ import annotations

from typing import get_args

import click
import pytest

from guidedrag_graph import vocabulary
from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.retrieval.ordering import RANKER_REGISTRY, ranker_named
from guidedrag_graph.schema import presets as schema


def _choices(*path: str) -> tuple[str, ...]:
    from guidedrag_graph.cli import cli

    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, name
        command = found
    option = next(p for p in command.params if p.name == "preset")
    assert isinstance(option.type, click.Choice)
    return tuple(option.type.choices)


def test_presets_settings_and_cli_choices_are_one_list() -> None:
    assert tuple(schema.PRESETS) == vocabulary.SCHEMA_PRESETS
    field = Settings.model_fields["schema_preset"].annotation
    accepted = set(get_args(field))  # one Literal: a bad value gets one requirement
    assert accepted == {*vocabulary.SCHEMA_PRESETS, "custom"}
    assert set(_choices("kb", "adopt")) == set(schema.PRESETS)
    assert set(_choices("load")) == set(vocabulary.LOADABLE_PRESETS) <= set(schema.PRESETS)


def test_a_preset_missing_from_the_vocabulary_fails_at_import() -> None:
    schema.check_presets(schema.PRESETS, vocabulary.SCHEMA_PRESETS)  # what import runs
    with pytest.raises(ImportError, match="add the preset to both"):
        schema.check_presets(schema.PRESETS, vocabulary.SCHEMA_PRESETS[:-1])
    extra = {**schema.PRESETS, "mine": schema.PRESETS["guidedrag"]}
    with pytest.raises(ImportError, match="add the preset to both"):
        schema.check_presets(extra, vocabulary.SCHEMA_PRESETS)


def test_rankers_are_objects_named_by_the_vocabulary() -> None:
    assert tuple(RANKER_REGISTRY) == vocabulary.RANKERS
    mmr = ranker_named("mmr")
    assert mmr.needs_vectors and mmr.fetch(5, None, 40) == 40 and mmr.fetch(5, 3, 40) == 5
    cosine = ranker_named("cosine")
    assert not cosine.needs_vectors and cosine.fetch(5, None, 40) == 5
    with pytest.raises(ConfigurationError, match="unknown ranker 'bm25'; use one of"):
        ranker_named("bm25")
