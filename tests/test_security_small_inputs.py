"""Issue 34's smaller items: each bad input is one line naming the problem, never a raw error.

A lone surrogate in the question, query vectors float32 cannot hold (1e-320, 1e308), a 10 MB
``$like`` value, 10,000 stated entities, a 70,000-character index-name setting, and credentials
written ``;password=`` or `` password=`` in the URI (in the error line and in the
``GUIDEDRAG_DEBUG=1`` traceback).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j.exceptions import ServiceUnavailable

from guidedrag_graph.cli.failure import explain
from guidedrag_graph.config import Settings, load_settings, redact_uri
from guidedrag_graph.errors import ConfigurationError, GuidedRAGError
from guidedrag_graph.retrieval.filters import compile_filter
from guidedrag_graph.retrieve_args import check_query_vector, check_question
from guidedrag_graph.semantics import merge_stated
from tests.cli_run import run_cli
from tests.conftest import free_port

SECRET = "S3cr3tPw"


def test_a_lone_surrogate_in_the_question_is_one_line(settings: Settings) -> None:
    with pytest.raises(ConfigurationError, match="lone surrogate") as caught:
        check_question("who founded \ud800Rome?", settings)
    assert "\n" not in str(caught.value) and "U+D800" in str(caught.value)


@pytest.mark.parametrize(
    "vector", [[1e-320, 0.0, 0.0], [1e308, 1.0, 0.0], [1e-320] * 3, [1e20, 1.0, 0.0]]
)
def test_vectors_float32_cannot_hold_are_refused(vector: list[float]) -> None:
    with pytest.raises(ConfigurationError, match="float32") as caught:
        check_query_vector(vector, 3)
    assert "\n" not in str(caught.value)


def test_ordinary_vectors_still_pass() -> None:
    out = check_query_vector([0.1, -0.2, 0.3], 3)
    assert out is not None and out.dtype.name == "float32"
    assert check_query_vector([1e-3, 0.0, 0.0], 3) is not None


def test_a_huge_filter_string_is_refused() -> None:
    with pytest.raises(GuidedRAGError, match="10,000") as caught:
        compile_filter({"title": {"$like": "x" * 1_000_000}})
    assert len(str(caught.value)) < 300
    with pytest.raises(GuidedRAGError, match="10,000"):
        compile_filter({"title": {"$in": ["ok", "y" * 10_001]}})
    compile_filter({"title": {"$like": "x" * 10_000}})  # at the limit: fine


def test_semantics_lists_are_bounded() -> None:
    with pytest.raises(GuidedRAGError, match="1,000") as caught:
        merge_stated({"entities": [f"e{i}" for i in range(10_000)]})
    assert len(str(caught.value)) < 300 and "e9999" not in str(caught.value)
    with pytest.raises(GuidedRAGError):
        merge_stated(None, [f"e{i}" for i in range(1_001)])
    assert merge_stated(None, [f"e{i}" for i in range(1_000)]) is not None


def test_a_huge_index_name_setting_is_cut_in_the_error() -> None:
    with pytest.raises(ConfigurationError) as caught:
        load_settings(vector_index_name="a" * 70_000)
    assert len(str(caught.value)) < 500 and "70,000" in str(caught.value)


def test_error_lines_cut_very_long_words() -> None:
    line, _ = explain(ConfigurationError("no index " + "b" * 70_000 + " exists"))
    assert len(line) < 500 and "70,000 characters" in line and line.endswith("exists")


URI_FORMS = [
    "bolt://neo4j:{secret}@127.0.0.1:{port}",
    "bolt://127.0.0.1:{port}?password={secret}",
    "bolt://127.0.0.1:{port};password={secret}",
    "bolt://127.0.0.1:{port} password={secret}",
]


@pytest.mark.parametrize("form", URI_FORMS)
def test_credentials_are_masked_in_every_uri_form(form: str) -> None:
    uri = form.format(secret=SECRET, port=7687)
    assert SECRET not in redact_uri(uri)
    line, _ = explain(ServiceUnavailable(f"Couldn't connect to {uri} (resolved)"))
    assert SECRET not in line
    line, _ = explain(RuntimeError(f"driver failed to open {uri}"))
    assert SECRET not in line


@pytest.mark.parametrize("form", URI_FORMS)
def test_debug_tracebacks_mask_credentials(form: str, tmp_path: Path) -> None:
    uri = form.format(secret=SECRET, port=free_port())
    result = run_cli(
        ["kb", "stats"], {"NEO4J_URI": uri, "GUIDEDRAG_DEBUG": "1"}, cwd=tmp_path, timeout=120
    )
    assert result.returncode != 0
    assert "Traceback" in result.stderr  # the debug traceback was printed ...
    assert SECRET not in result.stdout + result.stderr  # ... without the secret
    assert len([ln for ln in result.stderr.splitlines() if ln.startswith("error:")]) == 1
