"""Where the Cypher templates and migrations are read from: the checkout, or the installed wheel.

``cypher/`` and ``migrations/`` sit at the top of the repository so people open them in Neo4j
Browser; the wheel carries them as the data packages ``guidedrag_graph._cypher``/``_migrations``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_REPO_ROOT = _PACKAGE.parent


def _folder(top: str, installed: str) -> Path:
    # Plain paths, not importlib.resources: the data packages have no __init__.py, so files()
    # hands back a MultiplexedPath that pathlib cannot open (seen with an installed wheel).
    local = _REPO_ROOT / top
    if local.is_dir():
        return local
    return _PACKAGE / installed


def cypher_dir() -> Path:
    return _folder("cypher", "_cypher")


def migrations_dir() -> Path:
    return _folder("migrations", "_migrations")


def plugin_dir() -> Path:
    """The rank plugin's Maven project (``plugin/``; ``_plugin`` inside the wheel)."""
    return _folder("plugin", "_plugin")


@cache
def cypher_template(name: str) -> str:
    """The text of ``cypher/<name>.cypher`` (one source of truth for every query we run)."""
    path = cypher_dir() / f"{name}.cypher"
    return path.read_text(encoding="utf-8")
