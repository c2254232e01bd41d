"""Generation: one chat call to any OpenAI-compatible server, with checked citations.

The model is asked to cite chunk ids in square brackets. We keep only citations of chunks that
were in the prompt (anything else is reported as invalid, never silently trusted) and map each to
its document. Token usage comes from the server's ``usage`` when it sends one, else from our
estimate. An empty selection never reaches this module: the pipeline abstains first.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from openai import AsyncOpenAI, OpenAI, OpenAIError

from guidedrag_graph.augmentation import AugmentedPrompt, estimate_tokens
from guidedrag_graph.config import Settings
from guidedrag_graph.errors import ConfigurationError, GenerationError

_BRACKETS = re.compile(r"\[([^\[\]\n]{1,300})\]")
_PREFIX = re.compile(r"^(?:chunk(?:[\s_-]*id)?\s*[:#=]?\s*)", re.IGNORECASE)


@dataclass(frozen=True)
class Citation:
    """A chunk id the answer cited, and the document it belongs to."""

    chunk_id: str
    document_id: str | None
    document_title: str | None


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    estimated: bool = False


@dataclass
class Generation:
    text: str
    citations: list[Citation]
    invalid_citations: list[str]
    usage: Usage
    model: str
    latency_s: float
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


def parse_citations(text: str, prompt: AugmentedPrompt) -> tuple[list[Citation], list[str]]:
    """Citations of chunks in the prompt (in order of first mention), and the other ids cited.

    Accepts ``[id]``, ``[id1, id2]``, ``[chunk: id]``; bracketed text that is not an id of a
    prompt chunk and does not look like one (spaces) is ignored rather than called invalid.
    """
    by_id = {c.id: c for c in prompt.chunks}
    seen: set[str] = set()
    valid: list[Citation] = []
    invalid: list[str] = []
    for match in _BRACKETS.finditer(text):
        inner = match.group(1).strip()
        parts = [inner] if inner in by_id else re.split(r"\s*[,;]\s*", inner)
        for part in parts:
            cid = _PREFIX.sub("", part.strip()).strip()
            if not cid or cid in seen:
                continue
            if cid in by_id:
                seen.add(cid)
                chunk = by_id[cid]
                valid.append(Citation(cid, chunk.document_id, chunk.document_title))
            elif " " not in cid:
                seen.add(cid)
                invalid.append(cid)
    return valid, invalid


class Generator:
    """Calls the configured LLM; ``client`` may be injected (any ``openai.OpenAI``), and
    ``async_client`` (any ``openai.AsyncOpenAI``) for ``agenerate``."""

    def __init__(
        self,
        settings: Settings,
        client: OpenAI | None = None,
        async_client: AsyncOpenAI | None = None,
    ) -> None:
        self.settings = settings
        self._client = client
        self._async_client = async_client
        if client is None and async_client is None:
            self._options()  # no LLM configured: say so now, not at the first call

    def _options(self) -> dict[str, Any]:
        settings = self.settings
        if not settings.llm_configured:
            raise ConfigurationError(
                "no LLM is configured: set OPENAI_BASE_URL (any OpenAI-compatible server: "
                "vLLM, Ollama, llama.cpp) and/or OPENAI_API_KEY"
            )
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "none"
        return {
            "api_key": key,
            "base_url": settings.openai_base_url,
            "timeout": settings.llm_timeout_s,
            "max_retries": 1,
        }

    @property
    def client(self) -> OpenAI:
        if self._client is None:
            self._client = OpenAI(**self._options())
        return self._client

    @property
    def async_client(self) -> AsyncOpenAI:
        if self._async_client is None:
            self._async_client = AsyncOpenAI(**self._options())
        return self._async_client

    def _request(self, prompt: AugmentedPrompt) -> dict[str, Any]:
        return {
            "model": self.settings.llm_model,
            "messages": prompt.messages,
            "temperature": self.settings.llm_temperature,
        }

    def generate(self, prompt: AugmentedPrompt) -> Generation:
        started = time.perf_counter()
        try:
            response = self.client.chat.completions.create(**self._request(prompt))
        except OpenAIError as exc:
            raise self._failed(exc) from exc
        return self._generation(response, prompt, time.perf_counter() - started)

    async def agenerate(self, prompt: AugmentedPrompt) -> Generation:
        """``generate`` through ``openai.AsyncOpenAI``: the event loop runs while it waits."""
        started = time.perf_counter()
        try:
            response = await self.async_client.chat.completions.create(**self._request(prompt))
        except OpenAIError as exc:
            raise self._failed(exc) from exc
        return self._generation(response, prompt, time.perf_counter() - started)

    def _failed(self, exc: OpenAIError) -> GenerationError:
        return GenerationError(
            f"the LLM call to {self.settings.openai_base_url or 'api.openai.com'} failed "
            f"({exc.__class__.__name__}: {exc}); check OPENAI_BASE_URL, OPENAI_API_KEY and "
            f"GUIDEDRAG_LLM_MODEL={self.settings.llm_model!r}"
        )

    def _generation(self, response: Any, prompt: AugmentedPrompt, latency: float) -> Generation:
        if not response.choices or response.choices[0].message.content is None:
            raise GenerationError(
                f"the LLM ({self.settings.llm_model}) returned no text; check that the model "
                f"serves chat completions"
            )
        text = response.choices[0].message.content
        citations, invalid = parse_citations(text, prompt)
        if response.usage is not None:
            usage = Usage(
                response.usage.prompt_tokens,
                response.usage.completion_tokens,
                response.usage.total_tokens,
            )
        else:
            p, c = prompt.token_estimate, estimate_tokens(text)
            usage = Usage(p, c, p + c, estimated=True)
        return Generation(
            text=text,
            citations=citations,
            invalid_citations=invalid,
            usage=usage,
            model=response.model or self.settings.llm_model,
            latency_s=latency,
            raw=response.model_dump(),
        )
