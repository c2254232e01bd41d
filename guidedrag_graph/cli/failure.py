"""Every way a command can fail, as one ``error:`` line that names the problem and the fix.

``main`` hands any exception here. Library errors already say what to do; the rest (settings
validation, the neo4j driver, text that is not UTF-8) are translated. Nothing here imports the
driver or pydantic unless the exception came from them, so ``--help`` stays fast.
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Sequence

import click

from guidedrag_graph.identifiers import mask_credentials, printable

# Exit codes: 2 for anything the user can fix (click uses 2 for usage errors too), 1 for a bug.
USER_ERROR = 2
BUG = 1

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@")


_QUERY = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s?'\"]*)\?[^\s'\"]*")

# The longest run without a space an error line shows: a 70k-character setting or name is cut,
# its length said, so the line stays readable and the value is not echoed in full.
LONGEST_WORD = 200


def redact(text: str) -> str:
    """``text`` with the credentials of every URI in it masked: userinfo (``user:pass@``), the
    query string (``?password=...``) and any ``password=...`` (``;password=``, `` password=``)
    — driver messages and tracebacks echo the URI."""
    text = _USERINFO.sub(r"\1****@", text)
    text = _QUERY.sub(r"\1?****", text)
    return mask_credentials(text)


def _clipped(word: str) -> str:
    if len(word) <= LONGEST_WORD:
        return word
    return f"{word[: LONGEST_WORD - 20]}…({len(word):,} characters)"


def one_line(text: str) -> str:
    """``text`` as one safe line: credentials masked, whitespace runs (newlines too) made one
    space, any other control character, escape sequence or bidirectional override escaped
    (``printable``), and words over ``LONGEST_WORD`` characters cut."""
    return printable(" ".join(_clipped(word) for word in redact(text).split()))


def print_traceback() -> None:
    """The current exception's traceback (``GUIDEDRAG_DEBUG=1``), credentials masked like the
    one-line error's: exception messages and frames' text echo the URI."""
    sys.stderr.write(_safe_lines(traceback.format_exc()))


def _safe_lines(text: str) -> str:
    """Several lines (a traceback, a syntax error's caret), each made safe as ``one_line``
    makes one: credentials masked, control characters escaped, the line breaks kept."""
    return "\n".join(printable(redact(line)) for line in text.split("\n"))


def undecodable_argument(args: Sequence[str]) -> str | None:
    """Why an argument cannot be used, if the terminal passed bytes that are not UTF-8.

    Python keeps such bytes as lone surrogates (``\\xff`` becomes ``\\udcff``); they would
    fail deep inside the driver. Reject them here, naming the argument and the byte.
    """
    for index, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = arg[exc.start]
            code = ord(bad)
            what = (
                f"byte 0x{code - 0xDC00:02x}"
                if 0xDC80 <= code <= 0xDCFF
                else f"lone surrogate U+{code:04X}"
            )
            shown = arg[: exc.start].encode("utf-8", "replace").decode("utf-8")
            return (
                f"argument {index} is not valid UTF-8 ({what} after {shown[-30:]!r}): pass the "
                f"text in UTF-8 (a UTF-8 locale, e.g. LANG=C.UTF-8)"
            )
    return None


def usage_message(exc: click.UsageError) -> str:
    message = one_line(exc.format_message())
    ctx = exc.ctx
    if ctx is not None:
        message += f" (see `{ctx.command_path} --help`)"
    return message


def _where() -> str:
    """The redacted Neo4j URI of the current settings, for messages about the connection."""
    try:
        from guidedrag_graph.config import Settings, redact_uri

        return f" at {printable(redact_uri(Settings().neo4j_uri))}"
    except Exception:
        return ""


def _settings_error(exc: Exception) -> str | None:
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return None
    if exc.title == "Settings":
        from guidedrag_graph.config import describe_settings_error

        return describe_settings_error(exc)
    problems = []
    for error in exc.errors():
        loc = ".".join(str(part) for part in error.get("loc", ()))
        problems.append(f"{loc}: {error.get('msg')}" if loc else str(error.get("msg")))
    return f"invalid {exc.title}: " + "; ".join(problems)


def _unicode_error(exc: UnicodeError) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return (
            f"input is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset "
            f"{exc.start}: {exc.reason}): save the file as UTF-8"
        )
    if isinstance(exc, UnicodeEncodeError):
        code = ord(exc.object[exc.start])
        return (
            f"text holds U+{code:04X}, which is not a character UTF-8 can carry (a lone "
            f"surrogate, usually a byte that was not UTF-8): pass the text in UTF-8"
        )
    return f"text encoding problem: {exc}"


# Whether the command connected to a graph `guidedrag kb adopt` adopted (cli/common.driver_for):
# there, `guidedrag migrate` is never the advice (it would add constraints to the user's data).
_ADOPTED_GRAPH = False


def note_adopted_graph(adopted: bool) -> None:
    global _ADOPTED_GRAPH
    _ADOPTED_GRAPH = adopted


_GQL_STATUS = re.compile(r"^[0-9A-Z]{5}: ")
_INDEX_MISSING = re.compile(
    r"no such (?:vector )?(?:schema )?index|index .* (?:does not exist|not found)|"
    r"There is no .*index|IndexNotFound",
    re.I,
)


def _driver_error(exc: Exception) -> str | None:
    """Driver and server errors, if ``exc`` is one (the driver is imported only if it was)."""
    if "neo4j.exceptions" not in sys.modules:
        return None
    from neo4j import exceptions as nx

    first = one_line(str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__)
    if isinstance(exc, nx.AuthError):
        return f"Neo4j{_where()} refused the credentials: check NEO4J_USERNAME / NEO4J_PASSWORD"
    if isinstance(exc, (nx.ServiceUnavailable, nx.SessionExpired, nx.IncompleteCommit)):
        return (
            f"lost the connection to Neo4j{_where()} during the command "
            f"({exc.__class__.__name__}): check that the server runs (`guidedrag neo4j status`) "
            f"and rerun the same command; loads and migrations are safe to rerun"
        )
    if isinstance(exc, nx.Neo4jError):
        code = exc.code or exc.__class__.__name__
        message = _GQL_STATUS.sub("", one_line(exc.message or str(exc)))
        if code == "Neo.ClientError.Database.DatabaseNotFound":
            return (
                f"{message}{_where()}: set NEO4J_DATABASE to an existing database "
                f"(SHOW DATABASES lists them)"
            )
        if _INDEX_MISSING.search(message):
            fix = (
                "`guidedrag kb adopt` creates what an adopted graph needs (and "
                "`guidedrag kb embed-entities` the entity-name index)"
                if _ADOPTED_GRAPH
                else "create the indexes with `guidedrag migrate` (a KB guidedrag loaded) or "
                "`guidedrag kb adopt` (a graph another tool wrote)"
            )
            return (
                f"{message.rstrip('.')} (Neo4j{_where()}): {fix}; `guidedrag kb stats` lists "
                f"those present"
            )
        if isinstance(exc, nx.TransientError):
            return f"Neo4j could not finish a query ({code}): {message}; rerun the command"
        if isinstance(exc, nx.DatabaseError):
            return f"Neo4j failed ({code}): {message}; see the server's neo4j.log"
        return f"Neo4j rejected a query ({code}): {message}"
    if isinstance(exc, nx.DriverError):
        return f"the Neo4j driver failed ({exc.__class__.__name__}): {first}"
    return None


def explain(exc: BaseException) -> tuple[str, int]:
    """The ``error:`` line for ``exc`` and the exit code."""
    from guidedrag_graph.errors import GuidedRAGError, SelectionSyntaxError

    if isinstance(exc, SelectionSyntaxError):
        # The caret under the expression is worth its two extra lines.
        return _safe_lines(str(exc)), USER_ERROR
    if isinstance(exc, GuidedRAGError):
        return one_line(str(exc)), USER_ERROR
    if isinstance(exc, UnicodeError):
        return _unicode_error(exc), USER_ERROR
    if isinstance(exc, Exception):
        if "pydantic" in sys.modules:
            settings = _settings_error(exc)
            if settings is not None:
                return one_line(settings), USER_ERROR
        driver = _driver_error(exc)
        if driver is not None:
            return driver, USER_ERROR
        if isinstance(exc, OSError) and exc.strerror:
            where = f": {exc.filename}" if exc.filename else ""
            return printable(f"{exc.strerror}{where}"), USER_ERROR
        if isinstance(exc, RecursionError):
            return (
                "the input is nested too deeply to process: simplify it (fewer nested terms)",
                USER_ERROR,
            )
    detail = one_line(str(exc)) or "(no message)"
    return (
        f"unexpected {exc.__class__.__name__}: {detail} (a bug in guidedrag-graph: rerun with "
        f"GUIDEDRAG_DEBUG=1 for the traceback and report it)",
        BUG,
    )
