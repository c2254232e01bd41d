"""The selection DSL: a small recursive-descent parser with position-accurate errors.

Grammar (Python's precedence, all operators left-associative)::

    expr   := xor  ("|" xor)*
    xor    := and  ("^" and)*
    and    := diff ("&" diff)*
    diff   := atom ("-" atom)*
    atom   := call | "(" expr ")"
    call   := NAME "(" [arg ("," arg)*] [","] ")"
    arg    := [NAME "="] value
    value  := STRING | INT | "null" | "None" | "[" [STRING ("," STRING)*] [","] "]"
    boost  := "boost" "(" tier ("," tier)* [","] ")"      (only as the whole selection)
    tier   := expr ":" NUMBER

Strings take single or double quotes with backslash escapes (``\\'``, ``\\\\``, ``\\n``).
Whitespace, including newlines, is free; ``#`` starts a comment to the end of the line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guidedrag_graph.errors import SelectionError, SelectionSyntaxError
from guidedrag_graph.selection import ast as A

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_DIGITS = frozenset("0123456789")
_PUNCT = set("()[],=|&-^:")


@dataclass(frozen=True)
class Token:
    kind: str  # NAME, STRING, INT, PUNCT, END
    value: Any
    pos: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif ch in _PUNCT:
            tokens.append(Token("PUNCT", ch, i))
            i += 1
        elif ch in "'\"":
            start, i = i, i + 1
            buf: list[str] = []
            while True:
                if i >= n:
                    raise SelectionSyntaxError("unterminated string", text, start)
                c = text[i]
                if c == "\\":
                    if i + 1 >= n:
                        raise SelectionSyntaxError("unterminated string", text, start)
                    nxt = text[i + 1]
                    buf.append(_ESCAPES.get(nxt, nxt))
                    i += 2
                elif c == ch:
                    i += 1
                    break
                else:
                    buf.append(c)
                    i += 1
            tokens.append(Token("STRING", "".join(buf), start))
        elif ch in _DIGITS:
            start = i
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
            literal = text[start:i]
            if is_float:
                tokens.append(Token("FLOAT", float(literal), start))
            else:
                tokens.append(Token("INT", int(literal), start))
        elif ch.isalpha() or ch == "_":
            start = i
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            tokens.append(Token("NAME", text[start:i], start))
        else:
            raise SelectionSyntaxError(f"unexpected character {ch!r}", text, i)
    tokens.append(Token("END", None, n))
    return tokens


# name -> (positional parameter names, variadic?)
_SIGNATURES: dict[str, tuple[tuple[str, ...], bool]] = {
    "all": ((), False),
    "entity": (("name",), False),
    "hop": (("name", "types", "depth", "direction"), False),
    "khop": (("name", "k"), False),
    "near": (("name", "depth"), False),
    "type": (("name",), False),
    "category": (("name",), False),
    "document": (("name",), False),
    "source": (("name",), False),
    "date": (("start", "end"), False),
    "chunks": (("ids",), True),
    "boost": ((), True),  # parsed by _Parser.boost: tiers, not plain arguments
}
_REQUIRED: dict[str, int] = {"entity": 1, "hop": 2, "khop": 1, "near": 1, "type": 1}
_REQUIRED.update({"category": 1, "document": 1, "source": 1})


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, message: str, tok: Token | None = None) -> SelectionSyntaxError:
        return SelectionSyntaxError(message, self.text, (tok or self.tok).pos)

    def describe(self, tok: Token) -> str:
        if tok.kind == "END":
            return "end of input"
        if tok.kind == "STRING":
            return "a string"
        return repr(tok.value)

    def accept(self, punct: str) -> bool:
        if self.tok.kind == "PUNCT" and self.tok.value == punct:
            self.i += 1
            return True
        return False

    def expect(self, punct: str) -> None:
        if not self.accept(punct):
            raise self.error(f"expected {punct!r} but found {self.describe(self.tok)}")

    def parse(self) -> A.Expr:
        if self.tok.kind == "END":
            raise self.error("empty selection; write e.g. entity('Rome') or all()")
        expr = self.binary(1)
        if self.tok.kind != "END":
            raise self.error(
                f"expected an operator (|, ^, &, -) but found {self.describe(self.tok)}"
            )
        return expr

    def binary(self, level: int) -> A.Expr:
        if level > 4:
            return self.atom()
        symbol = {1: "|", 2: "^", 3: "&", 4: "-"}[level]
        left = self.binary(level + 1)
        while True:
            op_tok = self.tok
            if not self.accept(symbol):
                return left
            right = self.binary(level + 1)
            cls = {"|": A.Union, "^": A.SymDiff, "&": A.Intersect, "-": A.Difference}[symbol]
            try:
                left = cls(left, right)
            except SelectionError as exc:
                raise self.error(str(exc), op_tok) from exc

    def atom(self) -> A.Expr:
        tok = self.tok
        if self.accept("("):
            expr = self.binary(1)
            self.expect(")")
            return expr
        if tok.kind != "NAME":
            raise self.error(
                f"expected a selection such as entity('x') but found {self.describe(tok)}"
            )
        if tok.value not in _SIGNATURES:
            raise self.error(
                f"unknown selection {tok.value!r}; expected one of {', '.join(_SIGNATURES)}"
            )
        self.i += 1
        self.expect("(")
        if tok.value == "boost":
            return self.boost(tok)
        return self.call(tok)

    def boost(self, name_tok: Token) -> A.Expr:
        """``boost(expr: weight, ...)``: each tier a whole expression, then ``:`` and a number."""
        tiers: list[A.Tier] = []
        while not self.accept(")"):
            expr_tok = self.tok
            expr = self.binary(1)
            self.expect(":")
            weight_tok = self.tok
            if weight_tok.kind not in ("INT", "FLOAT"):
                raise self.error(
                    f"expected a weight (a number such as 0.2) but found "
                    f"{self.describe(weight_tok)}"
                )
            self.i += 1
            try:
                tiers.append(A.Tier(expr, weight_tok.value))
            except SelectionError as exc:
                where = expr_tok if isinstance(expr, A.Boost) else weight_tok
                raise self.error(str(exc), where) from exc
            if self.accept(")"):
                break
            if not self.accept(","):
                raise self.error(f"expected ',' or ')' but found {self.describe(self.tok)}")
        try:
            return A.Boost(tuple(tiers))
        except SelectionError as exc:
            raise self.error(str(exc), name_tok) from exc

    def call(self, name_tok: Token) -> A.Expr:
        name = str(name_tok.value)
        params, variadic = _SIGNATURES[name]
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        if not self.accept(")"):
            while True:
                arg_tok = self.tok
                if (
                    arg_tok.kind == "NAME"
                    and self.tokens[self.i + 1].kind == "PUNCT"
                    and self.tokens[self.i + 1].value == "="
                ):
                    if arg_tok.value not in params or variadic:
                        raise self.error(f"{name}() has no parameter {arg_tok.value!r}", arg_tok)
                    self.i += 2
                    keywords[str(arg_tok.value)] = self.value()
                else:
                    if keywords:
                        raise self.error("positional argument after a keyword argument")
                    if not variadic and len(positional) >= len(params):
                        raise self.error(f"{name}() takes at most {len(params)} arguments")
                    positional.append(self.value())
                if self.accept(")"):
                    break
                if not self.accept(","):
                    raise self.error(f"expected ',' or ')' but found {self.describe(self.tok)}")
                if self.accept(")"):
                    break
        try:
            return self.build(name, positional, keywords)
        except SelectionError as exc:
            if isinstance(exc, SelectionSyntaxError):
                raise
            raise self.error(str(exc), name_tok) from exc
        except (TypeError, ValueError) as exc:
            raise self.error(f"bad arguments to {name}(): {exc}", name_tok) from exc

    def build(self, name: str, positional: list[Any], keywords: dict[str, Any]) -> A.Expr:
        params, variadic = _SIGNATURES[name]
        if variadic:
            ids = []
            for value in positional:
                ids.extend(value if isinstance(value, list) else [value])
            if not all(isinstance(v, str) for v in ids):
                raise SelectionError("chunks() takes chunk ids as strings")
            return A.Chunks(tuple(ids))
        args = dict(zip(params, positional, strict=False))
        for key, value in keywords.items():
            if key in args:
                raise SelectionError(f"{name}() got {key!r} twice")
            args[key] = value
        if len(args) < _REQUIRED.get(name, 0):
            raise SelectionError(f"{name}() needs {', '.join(params[: _REQUIRED[name]])}")
        for key in ("name", "direction"):
            if key in args and not isinstance(args[key], str):
                raise SelectionError(f"{name}() takes {key} as a string")
        for key in ("depth", "k"):
            if key in args and not isinstance(args[key], int):
                raise SelectionError(f"{name}() takes {key} as an integer")
        if name == "hop":
            types = args["types"]
            types = [types] if isinstance(types, str) else types
            if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
                raise SelectionError("hop() takes relation types as a string or a list of strings")
            args["types"] = tuple(types)
        if name == "date":
            for key in ("start", "end"):
                if isinstance(args.get(key), list):
                    raise SelectionError("date() bounds are strings, years or null")
        return A.NODE_TYPES[name](**args)

    def value(self) -> Any:
        tok = self.tok
        if tok.kind in ("STRING", "INT"):
            self.i += 1
            return tok.value
        if tok.kind == "NAME" and tok.value in ("null", "None"):
            self.i += 1
            return None
        if self.accept("["):
            items: list[Any] = []
            if not self.accept("]"):
                while True:
                    item = self.tok
                    if item.kind != "STRING":
                        raise self.error(f"expected a string but found {self.describe(item)}")
                    self.i += 1
                    items.append(item.value)
                    if self.accept("]"):
                        break
                    if not self.accept(","):
                        raise self.error(f"expected ',' or ']' but found {self.describe(self.tok)}")
                    if self.accept("]"):
                        break
            return items
        raise self.error(f"expected a value (string, integer, list) but found {self.describe(tok)}")


def parse(text: str) -> A.Expr:
    """The expression the DSL text denotes; ``SelectionSyntaxError`` with a caret otherwise."""
    return _Parser(text).parse()
