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

from openai import OpenAI, OpenAIError

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
    """Calls the configured LLM; ``client`` may be injected (any ``openai.OpenAI``)."""

    def __init__(self, settings: Settings, client: OpenAI | None = None) -> None:
        if client is None:
            if not settings.llm_configured:
                raise ConfigurationError(
                    "no LLM is configured: set OPENAI_BASE_URL (any OpenAI-compatible server: "
                    "vLLM, Ollama, llama.cpp) and/or OPENAI_API_KEY"
                )
            key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "none"
            client = OpenAI(
                api_key=key,
                base_url=settings.openai_base_url,
                timeout=settings.llm_timeout_s,
                max_retries=1,
            )
        self.client = client
        self.settings = settings

    def generate(self, prompt: AugmentedPrompt) -> Generation:
        started = time.perf_counter()
        try:
            response = self.client.chat.completions.create(
                model=self.settings.llm_model,
                messages=prompt.messages,  # type: ignore[arg-type]
                temperature=self.settings.llm_temperature,
            )
        except OpenAIError as exc:
            raise GenerationError(
                f"the LLM call to {self.settings.openai_base_url or 'api.openai.com'} failed "
                f"({exc.__class__.__name__}: {exc}); check OPENAI_BASE_URL, OPENAI_API_KEY and "
                f"GUIDEDRAG_LLM_MODEL={self.settings.llm_model!r}"
            ) from exc
        latency = time.perf_counter() - started
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
