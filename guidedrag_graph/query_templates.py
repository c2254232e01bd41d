"""Turn a ``cypher/*.cypher`` template into the query we run: schema names, selection splice.

Templates are written for the default ``guidedrag`` schema so they run as-is in Neo4j Browser
(after their ``:param`` lines). To run them on another layout we rename, never concatenate user
text, with the selection compiler's renaming (``selection.templates.render``): labels, the
mentions and part-of patterns, and the properties of conventional variables are mapped through
the ``SchemaMapping``. The example selection between ``// selection:begin`` and
``// selection:end`` is replaced by the compiled selection (a fragment that binds ``c`` to each
selected chunk once).
"""

from __future__ import annotations

import re
from functools import lru_cache

from guidedrag_graph.resources import cypher_template
from guidedrag_graph.schema import SchemaMapping
from guidedrag_graph.selection.templates import finalize, render_slots

_SELECTION_RE = re.compile(
    r"^[ \t]*// selection:begin[^\n]*\n.*?^[ \t]*// selection:end[^\n]*$", re.M | re.S
)


def executable(text: str) -> str:
    """Drop Browser-only lines (``:param``) and full-line comments; keep the Cypher."""
    lines = [
        line
        for line in text.splitlines()
        if not line.lstrip().startswith((":param", "//")) and line.strip()
    ]
    return "\n".join(lines)


def rename(text: str, schema: SchemaMapping) -> str:
    """Map the default schema's names in ``text`` onto ``schema`` (escaped identifiers only).

    The same renaming as the selection fragments (one mechanism for every template); comment
    and ``:param`` lines are left alone, since they are dropped before the query runs.
    """
    return finalize(_rename_slots(text, schema))


def _rename_slots(text: str, schema: SchemaMapping) -> str:
    return "\n".join(
        line if line.lstrip().startswith(("//", ":param")) else render_slots(line, schema)
        for line in text.splitlines()
    )


def splice_selection(text: str, selection_cypher: str) -> str:
    """Replace the template's example selection with a compiled one."""
    if not _SELECTION_RE.search(text):
        raise ValueError("template has no `// selection:begin` ... `// selection:end` block")
    return _SELECTION_RE.sub(lambda _m: selection_cypher.strip(), text, count=1)


# Placeholders that survive renaming and comment stripping untouched (NUL never occurs in a
# template, and no rewrite matches it); they are filled in as the very last steps.
_SELECTION_MARK = "\x00SELECTION\x00"


def render(
    name: str,
    schema: SchemaMapping,
    *,
    selection_cypher: str | None = None,
    prefix: str = "",
    replacements: dict[str, str] | None = None,
) -> str:
    """The runnable query of template ``name``.

    Order matters (issue 10, D7): the template is renamed with identifier *slots*, comment and
    ``:param`` lines are dropped, the slots become escaped identifiers, and only then are the
    ``replacements`` values (already escaped by the caller, e.g. an index name) and the compiled
    selection (already final) put in. Nothing inserted is ever rewritten or cut again.

    Memoised: the result depends only on the arguments (templates are read once), and renaming
    costs ~0.1-0.4 ms per call, paid on every question otherwise (profiled at 8 clients).
    """
    return _render(
        name, schema, selection_cypher, prefix, tuple(sorted((replacements or {}).items()))
    )


@lru_cache(maxsize=1024)
def _render(
    name: str,
    schema: SchemaMapping,
    selection_cypher: str | None,
    prefix: str,
    replacements: tuple[tuple[str, str], ...],
) -> str:
    text = cypher_template(name)
    values: dict[str, str] = {}
    for n, (token, value) in enumerate(replacements):
        placeholder = f"\x00V{n}\x00"
        text = text.replace(token, placeholder)
        values[placeholder] = value
    if selection_cypher is not None:
        text = splice_selection(text, _SELECTION_MARK)
    text = finalize(executable(_rename_slots(text, schema)))
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    if selection_cypher is not None:
        text = text.replace(_SELECTION_MARK, selection_cypher.strip())
    return prefix + text
