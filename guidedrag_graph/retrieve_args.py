"""``retrieve()``'s arguments, validated once by a pydantic model (as neo4j-graphrag does).

A bad value is a ``ConfigurationError`` naming the argument and the fix, never a silent default:
``k=0`` is an error, not "the settings' top_k" (``None`` means that).
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.templates import queries as templates
from guidedrag_graph.vocabulary import PATHS, RANKERS, STEERINGS, Path, Ranker, Steering, one_of

if TYPE_CHECKING:
    from guidedrag_graph.context import GraphContext


class RetrieveArgs(BaseModel):
    """``k`` ≥ 1, a finite ``threshold`` in [-1, 1] (raw cosine), known steering/ranker/path."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int | None = Field(None, ge=1)
    ranker: Ranker | None = None
    steering: Steering | None = None
    path: Path | None = None
    threshold: float | None = Field(None, ge=-1.0, le=1.0)
    fetch_k: int | None = Field(None, ge=1)
    mmr_lambda: float | None = Field(None, ge=0.0, le=1.0)

    @field_validator("threshold", "mmr_lambda")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @classmethod
    def check(
        cls,
        *,
        k: int | None,
        ranker: str | None,
        steering: str | None,
        path: str | None,
        threshold: float | None,
        fetch_k: int | None = None,
        mmr_lambda: float | None = None,
    ) -> RetrieveArgs:
        try:
            return cls.model_validate(
                {
                    "k": k,
                    "ranker": ranker,
                    "steering": steering,
                    "path": path,
                    "threshold": threshold,
                    "fetch_k": fetch_k,
                    "mmr_lambda": mmr_lambda,
                }
            )
        except ValidationError as exc:
            raise ConfigurationError(_one_line(exc)) from None


# What each argument must be: an error names only the arguments that failed and their fix.
_FIXES = {
    "ranker": f"use {one_of(RANKERS)}",
    "steering": f"use {one_of(STEERINGS)}",
    "path": f"use {one_of(PATHS)}",
    "threshold": "use a raw cosine in [-1, 1]",
    "fetch_k": "use a whole number, 1 or more",
    "mmr_lambda": "use a number in [0, 1]",
}


def k_problem(k: object) -> str:
    """The one wording of a bad ``k`` (neo4j-graphrag's ``top_k``), whichever door it came in by."""
    return (
        f"invalid retrieve() argument k={k!r} (top_k is the same argument): use a whole number "
        f"of chunks, 1 or more"
    )


def _one_line(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        name = ".".join(str(x) for x in error["loc"])
        if name == "k":
            problems.append(k_problem(error.get("input")))
        else:
            fix = _FIXES.get(name, error["msg"])
            problems.append(f"invalid retrieve() argument {name}={error.get('input')!r}: {fix}")
    return "; ".join(problems)


# --- bounded inputs (docs/security.md)-------------------------------------------------------
# Checked before anything is embedded or sent: a 5 MB question costs a len(), not minutes of CPU.


QUESTION_EMPTY = "question is empty: pass the question to rank chunks for"


def check_question(question: object, settings: Settings, *, required: bool = True) -> str:
    """``question`` if it is text no longer than ``GUIDEDRAG_MAX_QUESTION`` characters that
    UTF-8 can carry (a lone surrogate would fail inside the embedder or the driver), and not
    empty or blank unless not ``required`` (a ``query_vector`` stands for it). Every door
    (``GuidedRAG.retrieve``, the CLI, LangChain, LlamaIndex, neo4j-graphrag, MCP) reaches this
    one check, so a blank question is refused in the same words everywhere."""
    if not isinstance(question, str):
        raise ConfigurationError(
            f"question must be text, not {type(question).__name__}: pass a str"
        )
    if not question.strip() and required:
        raise ConfigurationError(QUESTION_EMPTY)
    if len(question) > settings.max_question:
        raise ConfigurationError(
            f"question is {len(question):,} characters, over GUIDEDRAG_MAX_QUESTION="
            f"{settings.max_question:,}: shorten it (put long context in the KB, not the question) "
            f"or raise the setting"
        )
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigurationError(
            f"question is not valid text: U+{ord(question[exc.start]):04X} at index {exc.start} "
            f"is a lone surrogate (undecodable input bytes?); pass UTF-8 text"
        ) from None
    return question


def check_k(k: int | None, settings: Settings) -> None:
    """``k`` at most ``GUIDEDRAG_MAX_TOP_K`` (the lower bound is RetrieveArgs')."""
    if isinstance(k, int) and not isinstance(k, bool) and k > settings.max_top_k:
        raise ConfigurationError(
            f"invalid retrieve() argument k={k} (top_k is the same argument): over "
            f"GUIDEDRAG_MAX_TOP_K="
            f"{settings.max_top_k:,}; ask for fewer chunks or raise the setting"
        )


def check_query_vector(vector: object, dimensions: int | None) -> np.ndarray | None:
    """``vector`` as a float32 array if it is a flat, finite, non-zero list of numbers of the
    index's ``dimensions`` (when known); ``None`` passes (the question is embedded)."""
    if vector is None:
        return None
    fix = "pass the question's embedding as a flat list of floats"
    if isinstance(vector, (str, bytes)):
        raise ConfigurationError(f"query_vector is text, not numbers: {fix}")
    try:
        array = np.asarray(vector)
    except (TypeError, ValueError):  # ragged nesting
        array = np.asarray([], dtype=object)
    if array.dtype.kind not in "fiu":  # None, text, objects, ragged lists: not numbers
        raise ConfigurationError(f"query_vector holds something that is not a number: {fix}")
    array = np.asarray(array, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ConfigurationError(f"query_vector has shape {array.shape}, not a flat vector: {fix}")
    # One dot product, on the float32 array ranking uses, answers every check below for any
    # usable vector (finite and > 0 only if every element is finite, one is not zero and the
    # vector fits float32, the index's and Neo4j's cosine's type: 1e308 overflows it and 1e-320
    # rounds to zero, either coming back as Neo4j's raw error). numpy's calls are most of this
    # function's cost on a retrieval's path, so the element-wise checks run only to name a
    # problem.
    with np.errstate(over="ignore", under="ignore"):  # judged below, not warned about
        single = array.astype(np.float32)
        norm = float(np.dot(single, single))
    if not (math.isfinite(norm) and norm > 0.0):
        if not np.all(np.isfinite(array)):
            raise ConfigurationError(f"query_vector holds NaN or infinity: {fix}")
        if not np.any(array):
            raise ConfigurationError(f"query_vector is all zeros (no direction to rank by): {fix}")
        with np.errstate(over="ignore", under="ignore"):
            square = float(np.dot(array, array))
        raise ConfigurationError(
            "query_vector's values are too large or too small for float32 (its squared norm "
            f"{square:.3g} must lie between about 1e-38 and 3e38): {fix} (a normalised "
            "embedding always fits)"
        )
    if dimensions is not None and array.size != dimensions:
        raise ConfigurationError(
            f"query_vector has {array.size} dimensions but the vector index holds {dimensions}-d "
            f"vectors: embed the question with the model that embedded the chunks"
        )
    return single


# (index name) -> (expires, dimensions), per driver: SHOW INDEXES once a minute, not per question.
_DIMENSIONS: weakref.WeakKeyDictionary[Any, dict[str, tuple[float, int | None]]] = (
    weakref.WeakKeyDictionary()
)
_DIMENSIONS_TTL_S = 60.0


def index_dimensions(graph: GraphContext) -> int | None:
    """The chunk vector index's dimensions (None: no such index), kept a minute per driver;
    read through the context's one read function (``cypher/vector_index_filters.cypher``)."""
    settings = graph.settings
    kept = _DIMENSIONS.setdefault(graph.driver, {}).get(settings.vector_index_name)
    if kept is not None and kept[0] > time.monotonic():
        return kept[1]
    rows = graph.read(
        templates.query("vector_index_filters"),
        {"index_name": settings.vector_index_name},
        name="vector_index_filters",
    )
    config = ((rows[0]["options"] or {}).get("indexConfig") or {}) if rows else {}
    value = config.get("vector.dimensions")
    dimensions = int(value) if value is not None else None
    _DIMENSIONS[graph.driver][settings.vector_index_name] = (
        time.monotonic() + _DIMENSIONS_TTL_S,
        dimensions,
    )
    return dimensions


def validate(
    question: object,
    *,
    k: int | None,
    ranker: str | None,
    steering: str | None,
    path: str | None,
    threshold: float | None,
    query_vector: object,
    settings: Settings,
    dimensions: Callable[[], int | None],
) -> tuple[RetrieveArgs, np.ndarray | None]:
    """THE check of ``retrieve()``'s arguments (``RetrieveRequest.build`` calls it once per
    call): the enumerations and bounds (``RetrieveArgs``), then every bound of the free-form
    inputs, each a one-line ConfigurationError; the query vector as the float32 array it ranks
    by (None: the question is embedded). ``dimensions`` is asked only for a query vector."""
    args = RetrieveArgs.check(k=k, ranker=ranker, steering=steering, path=path, threshold=threshold)
    check_question(question, settings, required=query_vector is None)
    check_k(k, settings)
    if query_vector is None:
        return args, None
    return args, check_query_vector(query_vector, dimensions())
