"""The words users choose from — steering, ranker, path, tagger, template, preset — defined once.

Settings, ``retrieve()``'s argument model, the steering policy, the retrieval stage and the CLI's
``click.Choice`` lists all read them from here, so a new ranker or path is one line, and an
error message can never list a different set than the code accepts. The tuples are derived from
the ``Literal`` types, never written twice.
"""

from __future__ import annotations

from typing import Literal, get_args

# How the selection steers ranking: graded tiers over every chunk (the default), only inside the
# selection (the paper), or the selection boosted over every chunk.
Steering = Literal["auto", "hard", "soft"]
# How the ranked candidates become the top k: by score, or maximal marginal relevance.
Ranker = Literal["cosine", "mmr"]
# Where ranking runs inside Neo4j (retrieval's physical paths; the planner picks one).
Path = Literal["exact", "index", "search_in", "plugin"]
# Which tagger finds the entities a question names (``--auto-semantics``).
Tagger = Literal["embedding", "fulltext", "hybrid", "linker", "llm"]
# The augmented prompt's shape.
PromptTemplate = Literal["factoid", "open", "relational"]
# The graph layouts a schema mapping comes preset for (``schema.PRESETS`` holds one mapping per
# name, and fails at import if the two differ); ``custom`` is a mapping read from a file.
SchemaPreset = Literal[
    "guidedrag", "neo4j-graphrag", "neo4j-graphrag-builder", "langchain", "llamaindex"
]
# The layouts ``guidedrag load`` writes a bundle in (the builders' own layouts are adopted).
LoadablePreset = Literal["guidedrag", "neo4j-graphrag"]
# The kind of question a user states (the paper's factoid / open).
QuestionType = Literal["factoid", "open"]

STEERINGS: tuple[str, ...] = get_args(Steering)
RANKERS: tuple[str, ...] = get_args(Ranker)
PATHS: tuple[str, ...] = get_args(Path)
TAGGERS: tuple[str, ...] = get_args(Tagger)
TEMPLATES: tuple[str, ...] = get_args(PromptTemplate)
QUESTION_TYPES: tuple[str, ...] = get_args(QuestionType)
SCHEMA_PRESETS: tuple[str, ...] = get_args(SchemaPreset)
LOADABLE_PRESETS: tuple[str, ...] = get_args(LoadablePreset)


def one_of(values: tuple[str, ...]) -> str:
    """``a|b|c``: how error messages list a vocabulary."""
    return "|".join(values)
