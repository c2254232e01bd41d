"""The selection DSL's lexer: tokens on demand, every literal bounded while it is read.

Strings take single or double quotes with backslash escapes (``\\'``, ``\\\\``, ``\\n``).
Whitespace, including newlines, is free; ``#`` starts a comment to the end of the line. Tokens
are read lazily, so a megabyte of input costs no token list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guidedrag_graph.errors import SelectionSyntaxError
from guidedrag_graph.selection import limits as L

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_DIGITS = frozenset("0123456789")
_PUNCT = frozenset("()[],=|&-^:")


@dataclass(frozen=True)
class Token:
    kind: str  # NAME, STRING, INT, FLOAT, PUNCT, END
    value: Any
    pos: int


class Lexer:
    """Tokens on demand; every literal is bounded while it is read."""

    def __init__(self, text: str, limits: L.Limits) -> None:
        self.text = text
        self.limits = limits
        self.i = 0
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise SelectionSyntaxError(
                f"invalid character {text[exc.start]!r} (a lone surrogate: undecodable input "
                f"bytes?); pass UTF-8 text",
                printable(text),
                exc.start,
            ) from None

    def error(self, message: str, pos: int) -> SelectionSyntaxError:
        return SelectionSyntaxError(message, self.text, pos)

    def next(self) -> Token:
        text, n = self.text, len(self.text)
        i = self.i
        while i < n:
            ch = text[i]
            if ch.isspace():
                i += 1
            elif ch == "#":
                end = text.find("\n", i)
                i = n if end == -1 else end
            else:
                break
        if i >= n:
            self.i = n
            return Token("END", None, n)
        ch = text[i]
        if ch in _PUNCT:
            self.i = i + 1
            return Token("PUNCT", ch, i)
        if ch in "'\"":
            return self.string(i, ch)
        if ch in _DIGITS:
            return self.number(i)
        if ch.isalpha() or ch == "_":
            start = i
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            self.i = i
            return Token("NAME", text[start:i], start)
        raise self.error(f"unexpected character {ch!r}", i)

    def string(self, start: int, quote: str) -> Token:
        text, n, cap = self.text, len(self.text), self.limits.max_string
        i = start + 1
        buf: list[str] = []
        while True:
            if i >= n:
                raise self.error("unterminated string", start)
            c = text[i]
            if c == "\\":
                if i + 1 >= n:
                    raise self.error("unterminated string", start)
                nxt = text[i + 1]
                buf.append(_ESCAPES.get(nxt, nxt))
                i += 2
            elif c == quote:
                i += 1
                break
            else:
                buf.append(c)
                i += 1
            if len(buf) > cap:
                raise self.error(
                    f"string longer than {cap:,} characters (GUIDEDRAG_MAX_STRING)", start
                )
        self.i = i
        return Token("STRING", "".join(buf), start)

    def number(self, start: int) -> Token:
        text, n = self.text, len(self.text)
        i = start
        while i < n and text[i] in _DIGITS:
            i += 1
        is_float = False
        if i + 1 < n and text[i] == "." and text[i + 1] in _DIGITS:
            is_float = True
            i += 1
            while i < n and text[i] in _DIGITS:
                i += 1
        if i < n and text[i] in "eE":
            j = i + 1
            if j < n and text[j] in "+-":
                j += 1
            if j < n and text[j] in _DIGITS:
                is_float = True
                i = j
                while i < n and text[i] in _DIGITS:
                    i += 1
        self.i = i
        literal = text[start:i]
        if is_float:
            if len(literal) > L.MAX_FLOAT_CHARS:
                raise self.error(f"number too long ({len(literal):,} characters)", start)
            return Token("FLOAT", float(literal), start)
        if len(literal) > L.MAX_INT_DIGITS:
            raise self.error(
                f"integer too large ({len(literal):,} digits); depths are 1 to "
                f"{self.limits.max_hop_depth}",
                start,
            )
        return Token("INT", int(literal), start)


def printable(text: str) -> str:
    """``text`` with lone surrogates shown as escapes, so an error message can be printed."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def tokenize(text: str, limits: L.Limits | None = None) -> list[Token]:
    """Every token of ``text`` (for tools and tests; the parser reads them lazily)."""
    lexer = Lexer(text, limits or L.Limits())
    out = [lexer.next()]
    while out[-1].kind != "END":
        out.append(lexer.next())
    return out
