"""One exception root, with specific subclasses, so callers can catch the library's errors alone.

Every message names the problem *and* the fix: users meet these at the command line first.
"""

from __future__ import annotations


class GuidedRAGError(Exception):
    """Root of every error this library raises on purpose."""


class ConfigurationError(GuidedRAGError):
    """Settings or schema mapping that cannot work (bad value, missing key, wrong dimensions)."""


class Neo4jRuntimeError(GuidedRAGError):
    """The managed local Neo4j could not be installed, started or stopped."""


class DatabaseUnavailableError(GuidedRAGError):
    """Neo4j does not answer at the configured URI."""


class QueryTimeoutError(GuidedRAGError):
    """Neo4j stopped a query at the configured transaction timeout (GUIDEDRAG_QUERY_TIMEOUT)."""


class QueryMemoryError(GuidedRAGError):
    """Neo4j stopped a query at its per-transaction memory limit (db.memory.transaction.max)."""


class MigrationError(GuidedRAGError):
    """A migration failed or an applied migration file was edited afterwards."""


class BundleError(GuidedRAGError):
    """A KB bundle is malformed; the message starts with ``file:line``."""


class LoadConflictError(BundleError):
    """A bundle's document, chunk or entity id exists in the database with other content;
    nothing was written (``--on-conflict=update`` / ``on_conflict="update"`` replaces it)."""


class EntityConflictError(LoadConflictError):
    """A bundle declares an entity id the database holds under another name; nothing was
    written (``--on-conflict=update`` / ``on_conflict="update"`` renames it instead)."""


class SelectionError(GuidedRAGError):
    """A selection expression is malformed or refers to something unknown."""


class SelectionCostError(SelectionError):
    """A selection's cost, estimated from cheap counts before it runs, is over the limit
    (GUIDEDRAG_MAX_SELECTION_COST)."""


class SelectionSyntaxError(SelectionError):
    """The selection DSL could not be parsed; carries the position of the error."""

    def __init__(self, message: str, text: str, position: int) -> None:
        self.text = text
        self.position = position
        line = text.count("\n", 0, position) + 1
        line_start = text.rfind("\n", 0, position) + 1
        line_end = text.find("\n", position)
        if line_end == -1:
            line_end = len(text)
        self.line = line
        self.column = position - line_start + 1
        # Long lines are shown as a window around the position, so the message stays short.
        start = max(line_start, position - 60)
        end = min(line_end, position + 60)
        shown = ("..." if start > line_start else "") + text[start:end]
        shown += "..." if end < line_end else ""
        caret = " " * (position - start + (3 if start > line_start else 0)) + "^"
        super().__init__(f"{message} at line {line}, column {self.column}:\n  {shown}\n  {caret}")


class UnknownNameError(SelectionError):
    """An entity, relation type, label or document that the KB does not have."""

    def __init__(self, kind: str, name: str, suggestions: list[str] | None = None) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = suggestions or []
        hint = (
            f"; did you mean {', '.join(repr(s) for s in self.suggestions)}?"
            if self.suggestions
            else ""
        )
        super().__init__(f"unknown {kind} {name!r}{hint}")


class EmbeddingError(GuidedRAGError):
    """An embedder failed or returned vectors of the wrong dimension."""


class GenerationError(GuidedRAGError):
    """The LLM call failed or returned something unusable."""
