"""Extra neo4j.conf settings for a managed server (``guidedrag neo4j start --conf KEY=VALUE``):
checked before anything is written or started, and never one of the lines ``neo4j_local`` writes
itself (the loopback addresses, auth, the directories, the defence-in-depth settings)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from guidedrag_graph.errors import Neo4jRuntimeError

# ``--conf KEY=VALUE``: a Neo4j setting name (dotted lower-case words) and a one-line value.
_CONF_KEY = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)+")
MAX_EXTRA_CONF = 32
MAX_CONF_VALUE = 256
# Ours though not always among the lines when a caller's settings are checked: written only once
# a plugin is in plugins/ (``plugins.plugin_conf_lines``), which ``start`` may add after that.
RESERVED_KEYS = frozenset({"dbms.security.procedures.unrestricted"})


def extra_conf_lines(pairs: Sequence[str], written: Sequence[str]) -> tuple[str, ...]:
    """``KEY=VALUE`` settings for neo4j.conf beside the ones this module writes (``written``,
    its own lines), checked: a setting name, a one-line printable value, at most
    ``MAX_EXTRA_CONF``; none may replace a line of ours (the loopback addresses, auth, the
    directories and the defence-in-depth settings are not for a caller to undo)."""
    if len(pairs) > MAX_EXTRA_CONF:
        raise Neo4jRuntimeError(
            f"{len(pairs)} extra settings: at most {MAX_EXTRA_CONF}; put the rest in fewer lines"
        )
    ours = RESERVED_KEYS | {
        line.split("=", 1)[0] for line in written if "=" in line and not line.startswith("#")
    }
    out: list[str] = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        value = value.strip()
        if not sep or not _CONF_KEY.fullmatch(key):
            raise Neo4jRuntimeError(
                f"extra setting {pair[:80]!r} is not KEY=VALUE with a Neo4j setting name "
                "(e.g. dbms.cypher.min_replan_interval=1h)"
            )
        if not value or len(value) > MAX_CONF_VALUE or not value.isprintable():
            raise Neo4jRuntimeError(
                f"extra setting {key}: give a one-line printable value of at most "
                f"{MAX_CONF_VALUE} characters"
            )
        if key in ours or any(line.startswith(f"{key}=") for line in out):
            raise Neo4jRuntimeError(
                f"extra setting {key} is given twice or is one guidedrag writes itself; give "
                "it once, and not one of ours (its own option, where it has one, sets it)"
            )
        out.append(f"{key}={value}")
    return tuple(out)
