"""The selection DSL: an iterative operator-precedence parser with position-accurate errors.

Grammar (Python's precedence, all operators left-associative)::

    expr   := xor  ("|" xor)*
    xor    := and  ("^" and)*
    and    := diff ("&" diff)*
    diff   := atom ("-" atom)*
    atom   := call | "(" expr ")" | boost
    call   := NAME "(" [arg ("," arg)*] [","] ")"
    arg    := [NAME "="] value
    value  := STRING | INT | "null" | "None" | "[" [STRING ("," STRING)*] [","] "]"
    boost  := "boost" "(" tier ("," tier)* [","] ")"      (only as the whole selection)
    tier   := expr ":" NUMBER

Strings take single or double quotes with backslash escapes (``\\'``, ``\\\\``, ``\\n``).
Whitespace, including newlines, is free; ``#`` starts a comment to the end of the line.

No Python recursion follows the input: parentheses and ``boost(`` push frames on an explicit
stack (bounded by ``Limits.max_depth``), operators are reduced shunting-yard style, and tokens
are read lazily, so a megabyte of ``((((`` costs one error, not a stack overflow or a token list.
Every limit (terms, depth, string length, list size, integer size, hop depth) is an error with a
position, raised before the expression exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guidedrag_graph.errors import SelectionError, SelectionSyntaxError
from guidedrag_graph.selection import ast as A
from guidedrag_graph.selection import limits as L

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_DIGITS = frozenset("0123456789")
_PUNCT = frozenset("()[],=|&-^:")
_BINARY: dict[str, type[A.BinaryOp]] = {
    "|": A.Union,
    "^": A.SymDiff,
    "&": A.Intersect,
    "-": A.Difference,
}


@dataclass(frozen=True)
class Token:
    kind: str  # NAME, STRING, INT, FLOAT, PUNCT, END
    value: Any
    pos: int


class _Lexer:
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
                _printable(text),
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


def _printable(text: str) -> str:
    """``text`` with lone surrogates shown as escapes, so an error message can be printed."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def tokenize(text: str, limits: L.Limits | None = None) -> list[Token]:
    """Every token of ``text`` (for tools and tests; the parser reads them lazily)."""
    lexer = _Lexer(text, limits or L.Limits())
    out = [lexer.next()]
    while out[-1].kind != "END":
        out.append(lexer.next())
    return out


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
    "boost": ((), True),  # tiers, read by the expression loop
}
_REQUIRED: dict[str, int] = {"entity": 1, "hop": 2, "khop": 1, "near": 1, "type": 1}
_REQUIRED.update({"category": 1, "document": 1, "source": 1})


@dataclass
class _Frame:
    """One open level: the whole input, a parenthesis, or a boost(...) being read."""

    kind: str  # "top", "paren", "boost"
    opener: Token
    operands: list[A.Expr] = field(default_factory=list)
    ops: list[Token] = field(default_factory=list)
    tiers: list[A.Tier] = field(default_factory=list)
    tier_start: Token | None = None


class _Parser:
    def __init__(self, text: str, limits: L.Limits) -> None:
        self.text = text
        self.limits = limits
        # A first pass only lexes (nothing kept), so a lexical error anywhere is reported before
        # a syntax error it causes, as with an eager token list, in constant memory.
        scan = _Lexer(text, limits)
        while scan.next().kind != "END":
            pass
        self.lexer = _Lexer(text, limits)
        self.tok = self.lexer.next()
        self._peek: Token | None = None
        self.terms = 0

    # --- tokens ---------------------------------------------------------------------------
    def advance(self) -> None:
        if self._peek is not None:
            self.tok, self._peek = self._peek, None
        else:
            self.tok = self.lexer.next()

    def peek(self) -> Token:
        if self._peek is None:
            self._peek = self.lexer.next()
        return self._peek

    def error(self, message: str, tok: Token | None = None) -> SelectionSyntaxError:
        return SelectionSyntaxError(message, self.text, (tok or self.tok).pos)

    @staticmethod
    def describe(tok: Token) -> str:
        if tok.kind == "END":
            return "end of input"
        if tok.kind == "STRING":
            return "a string"
        text = repr(tok.value)
        return text if len(text) <= 40 else text[:37] + "..."

    def is_punct(self, value: str) -> bool:
        return self.tok.kind == "PUNCT" and self.tok.value == value

    def accept(self, punct: str) -> bool:
        if self.is_punct(punct):
            self.advance()
            return True
        return False

    def expect(self, punct: str) -> None:
        if not self.accept(punct):
            raise self.error(f"expected {punct!r} but found {self.describe(self.tok)}")

    # --- expressions ------------------------------------------------------------------------
    def parse(self) -> A.Expr:
        if self.tok.kind == "END":
            raise self.error("empty selection; write e.g. entity('Rome') or all()")
        frames = [_Frame("top", self.tok)]
        expect_operand = True
        while True:
            frame = frames[-1]
            tok = self.tok
            if expect_operand:
                if self.accept("("):
                    self.push(frames, _Frame("paren", tok))
                    continue
                if tok.kind == "NAME" and tok.value == "boost" and self.peek_is("("):
                    self.advance()
                    self.advance()
                    if self.is_punct(")"):
                        raise self.error(
                            "boost(...) needs at least one tier, e.g. boost(entity('x'): 0.2)",
                            tok,
                        )
                    self.push(frames, _Frame("boost", tok, tier_start=self.tok))
                    continue
                frame.operands.append(self.atom())
                expect_operand = False
                continue
            if tok.kind == "PUNCT" and tok.value in A.PRECEDENCE:
                self.reduce(frame, A.PRECEDENCE[tok.value])
                frame.ops.append(tok)
                self.advance()
                expect_operand = True
                continue
            if frame.kind == "top":
                if tok.kind != "END":
                    raise self.error(
                        f"expected an operator (|, ^, &, -) but found {self.describe(tok)}"
                    )
                self.reduce(frame, 0)
                return frame.operands[0]
            if frame.kind == "paren":
                self.expect(")")
                self.reduce(frame, 0)
                frames.pop()
                frames[-1].operands.append(frame.operands[0])
                continue
            # a boost frame: a tier's expression is complete, its weight follows
            self.expect(":")
            self.reduce(frame, 0)
            self.tier(frame, frame.operands.pop())
            closed = self.accept(")")
            if not closed:
                if not self.accept(","):
                    raise self.error(f"expected ',' or ')' but found {self.describe(self.tok)}")
                closed = self.accept(")")
            if closed:
                frames.pop()
                try:
                    boost = A.Boost(tuple(frame.tiers))
                except SelectionError as exc:
                    raise self.error(str(exc), frame.opener) from exc
                frames[-1].operands.append(boost)
            else:
                frame.tier_start = self.tok
                expect_operand = True

    def peek_is(self, punct: str) -> bool:
        nxt = self.peek()
        return nxt.kind == "PUNCT" and nxt.value == punct

    def push(self, frames: list[_Frame], frame: _Frame) -> None:
        if len(frames) > self.limits.max_depth:
            raise self.error(str(L.too_deep(len(frames), self.limits)), frame.opener)
        frames.append(frame)

    def reduce(self, frame: _Frame, min_precedence: int) -> None:
        """Apply the pending operators that bind at least as tightly (left-associative)."""
        while frame.ops and A.PRECEDENCE[frame.ops[-1].value] >= min_precedence:
            op = frame.ops.pop()
            right = frame.operands.pop()
            left = frame.operands.pop()
            try:
                frame.operands.append(_BINARY[op.value](left, right))
            except SelectionError as exc:
                raise self.error(str(exc), op) from exc

    def tier(self, frame: _Frame, expr: A.Expr) -> None:
        weight_tok = self.tok
        if weight_tok.kind not in ("INT", "FLOAT"):
            raise self.error(
                f"expected a weight (a number such as 0.2) but found {self.describe(weight_tok)}"
            )
        self.advance()
        try:
            frame.tiers.append(A.Tier(expr, weight_tok.value))
        except SelectionError as exc:
            where = frame.tier_start if isinstance(expr, A.Boost) else weight_tok
            raise self.error(str(exc), where) from exc

    def atom(self) -> A.Expr:
        tok = self.tok
        if tok.kind != "NAME":
            raise self.error(
                f"expected a selection such as entity('x') but found {self.describe(tok)}"
            )
        if tok.value not in _SIGNATURES or tok.value == "boost":
            raise self.error(
                f"unknown selection {self.describe(tok)}; expected one of {', '.join(_SIGNATURES)}"
            )
        self.terms += 1
        if self.terms > self.limits.max_terms:
            raise self.error(str(L.too_many_terms(self.terms, self.limits)), tok)
        self.advance()
        self.expect("(")
        return self.call(tok)

    # --- calls ------------------------------------------------------------------------------
    def call(self, name_tok: Token) -> A.Expr:
        name = str(name_tok.value)
        params, variadic = _SIGNATURES[name]
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        if not self.accept(")"):
            while True:
                arg_tok = self.tok
                if arg_tok.kind == "NAME" and self.peek_is("="):
                    if arg_tok.value not in params or variadic:
                        raise self.error(
                            f"{name}() has no parameter {self.describe(arg_tok)}", arg_tok
                        )
                    self.advance()
                    self.advance()
                    keywords[str(arg_tok.value)] = self.value()
                else:
                    if keywords:
                        raise self.error("positional argument after a keyword argument")
                    if not variadic and len(positional) >= len(params):
                        raise self.error(f"{name}() takes at most {len(params)} arguments")
                    if variadic and len(positional) >= self.limits.max_list:
                        raise self.error(
                            f"{name}() takes at most {self.limits.max_list:,} values "
                            f"(GUIDEDRAG_MAX_LIST)"
                        )
                    positional.append(self.value())
                if self.accept(")"):
                    break
                if not self.accept(","):
                    raise self.error(f"expected ',' or ')' but found {self.describe(self.tok)}")
                if self.accept(")"):
                    break
        try:
            node = self.build(name, positional, keywords)
            L.check_leaf(node, self.limits)
            return node
        except SelectionSyntaxError:
            raise
        except SelectionError as exc:
            raise self.error(str(exc), name_tok) from exc
        except (TypeError, ValueError) as exc:
            raise self.error(f"bad arguments to {name}(): {exc}", name_tok) from exc

    def build(self, name: str, positional: list[Any], keywords: dict[str, Any]) -> A.Expr:
        params, variadic = _SIGNATURES[name]
        if variadic:
            ids: list[Any] = []
            for value in positional:
                ids.extend(value if isinstance(value, list) else [value])
            if not all(isinstance(v, str) for v in ids):
                raise SelectionError("chunks() takes chunk ids as strings")
            L.check_list(ids, "chunks() ids", self.limits)
            return A.Chunks(tuple(ids))
        args = dict(zip(params, positional, strict=False))
        for key, value in keywords.items():
            if key in args:
                raise SelectionError(f"{name}() got {key!r} twice")
            args[key] = value
        if len(args) < _REQUIRED.get(name, 0):
            raise SelectionError(f"{name}() needs {', '.join(params[: _REQUIRED[name]])}")
        if name == "entity" and isinstance(args.get("name"), list):
            return A.Entities(tuple(args["name"]))
        for key in ("name", "direction"):
            if key in args and not isinstance(args[key], str):
                raise SelectionError(f"{name}() takes {key} as a string")
        for key in ("depth", "k"):
            if key in args and not isinstance(args[key], int):
                raise SelectionError(f"{name}() takes {key} as an integer")
            if key in args:
                L.check_hop_depth(args[key], name, self.limits)
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
            self.advance()
            return tok.value
        if tok.kind == "NAME" and tok.value in ("null", "None"):
            self.advance()
            return None
        if self.accept("["):
            items: list[Any] = []
            if not self.accept("]"):
                while True:
                    item = self.tok
                    if item.kind != "STRING":
                        raise self.error(f"expected a string but found {self.describe(item)}")
                    if len(items) >= self.limits.max_list:
                        raise self.error(
                            f"list longer than {self.limits.max_list:,} items (GUIDEDRAG_MAX_LIST)"
                        )
                    self.advance()
                    items.append(item.value)
                    if self.accept("]"):
                        break
                    if not self.accept(","):
                        raise self.error(f"expected ',' or ']' but found {self.describe(self.tok)}")
                    if self.accept("]"):
                        break
            return items
        raise self.error(f"expected a value (string, integer, list) but found {self.describe(tok)}")


def parse(text: str, limits: L.Limits | None = None) -> A.Expr:
    """The expression the DSL text denotes; ``SelectionSyntaxError`` with a caret otherwise.

    ``limits`` default to ``Limits()`` (the settings' defaults); ``Selector`` passes the
    configured ones.
    """
    if not isinstance(text, str):
        raise SelectionError(f"a selection is text, not {type(text).__name__}")
    limits = limits or L.Limits()
    expr = _Parser(text, limits).parse()
    L.check(expr, limits)
    return expr
