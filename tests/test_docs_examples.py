"""Every Python example in README.md and docs/*.md runs, against the real Neo4j and sample KB.

Examples rot silently when the API moves; running them keeps the docs honest. Each ```python
block is one test; the blocks of one file share a namespace, in order. A block may use ``driver``
and ``settings`` (the test server's), and
``Settings()`` reaches the same server through the environment. An LLM call goes to the local
OpenAI-compatible test server. A block that cannot run here says so in the line above it with
``<!-- not run: reason -->`` and is not collected (it is neither passed nor skipped).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from guidedrag_graph.config import Settings
from tests.llm_server import LLMServer, llm_server

REPO_ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
_NOT_RUN = re.compile(r"<!--\s*not run:[^>]*-->\s*$")


def _examples() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for path in [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            before = text[: match.start()].rstrip(" ").rstrip("\n").rsplit("\n", 1)[-1]
            if _NOT_RUN.search(before):
                continue
            line = text[: match.start()].count("\n") + 1
            code = textwrap.dedent(match.group(1))  # blocks inside list items are indented
            found.append((f"{path.relative_to(REPO_ROOT)}:{line}", code))
    return found


EXAMPLES = _examples()
_NAMESPACES: dict[str, dict[str, Any]] = {}


def test_the_docs_have_examples() -> None:
    """The collector itself works: the README's tour is among the examples."""
    assert any(name.startswith("README.md:") for name, _ in EXAMPLES)


@pytest.fixture(scope="module")
def llm() -> Iterator[LLMServer]:
    with llm_server() as server:
        yield server


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_example_runs(
    where: str,
    code: str,
    sample_db: Driver,
    settings: Settings,
    llm: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NEO4J_URI", settings.neo4j_uri)
    monkeypatch.setenv("NEO4J_USERNAME", settings.neo4j_username)
    monkeypatch.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
    monkeypatch.setenv("NEO4J_DATABASE", settings.neo4j_database)
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    # The blocks of one file run in order in one namespace, as a reader would run them.
    namespace = _NAMESPACES.setdefault(where.rsplit(":", 1)[0], {})
    namespace.update(driver=sample_db, settings=settings)
    exec(compile(code, where, "exec"), namespace)
