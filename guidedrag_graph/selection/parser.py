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

Tokens (strings, numbers, comments) are read by ``lexer.py``. The primitives and their
arguments are not listed here: each primitive's class declares its DSL name and arguments
(``Leaf.args``), and ``_SIGNATURES`` is built from the kinds ``ast.LEAF_TYPES`` registers.

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
from guidedrag_graph.selection import limits as L
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.lexer import Lexer, Token, tokenize

__all__ = ["Token", "parse", "tokenize"]

# DSL name -> (positional parameter names, variadic?), from what each primitive declares; boost's
# tiers are read by the expression loop.
_SIGNATURES: dict[str, tuple[tuple[str, ...], bool]] = {
    cls.op: (tuple(cls.args), cls.variadic) for cls in A.LEAF_TYPES if cls.in_dsl
} | {"boost": ((), True)}
_REQUIRED: dict[str, int] = {
    cls.op: sum(1 for _, default in cls.args.values() if default is ...)
    for cls in A.LEAF_TYPES
    if cls.in_dsl and not cls.variadic
}
_BINARY: dict[str, type[A.BinaryOp]] = {cls.symbol: cls for cls in A.SET_TYPES}


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
        scan = Lexer(text, limits)
        while scan.next().kind != "END":
            pass
        self.lexer = Lexer(text, limits)
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
            if expect_operand:
                expect_operand = self.operand(frames)
                continue
            frame = frames[-1]
            tok = self.tok
            if tok.kind == "PUNCT" and tok.value in A.PRECEDENCE:
                self.reduce(frame, A.PRECEDENCE[tok.value])
                frame.ops.append(tok)
                self.advance()
                expect_operand = True
            elif frame.kind == "top":
                if tok.kind != "END":
                    raise self.error(
                        f"expected an operator (|, ^, &, -) but found {self.describe(tok)}"
                    )
                self.reduce(frame, 0)
                return frame.operands[0]
            elif frame.kind == "paren":
                self.expect(")")
                self.reduce(frame, 0)
                frames.pop()
                frames[-1].operands.append(frame.operands[0])
            else:  # a boost frame: a tier's expression is complete, its weight follows
                expect_operand = self.close_tier(frames)

    def operand(self, frames: list[_Frame]) -> bool:
        """Read what starts an operand: ``(`` or ``boost(`` opens a frame (True: an operand is
        still expected), anything else is an atom (False)."""
        tok = self.tok
        if self.accept("("):
            self.push(frames, _Frame("paren", tok))
            return True
        if tok.kind == "NAME" and tok.value == "boost" and self.peek_is("("):
            self.advance()
            self.advance()
            if self.is_punct(")"):
                raise self.error(
                    "boost(...) needs at least one tier, e.g. boost(entity('x'): 0.2)", tok
                )
            self.push(frames, _Frame("boost", tok, tier_start=self.tok))
            return True
        frames[-1].operands.append(self.atom())
        return False

    def close_tier(self, frames: list[_Frame]) -> bool:
        """``: weight`` after a tier's expression, then ``,`` (True: another tier follows) or
        ``)``, which builds the boost (False)."""
        frame = frames[-1]
        self.expect(":")
        self.reduce(frame, 0)
        self.tier(frame, frame.operands.pop())
        closed = self.accept(")")
        if not closed:
            if not self.accept(","):
                raise self.error(f"expected ',' or ')' but found {self.describe(self.tok)}")
            closed = self.accept(")")
        if not closed:
            frame.tier_start = self.tok
            return True
        frames.pop()
        try:
            boost = A.Boost(tuple(frame.tiers))
        except SelectionError as exc:
            raise self.error(str(exc), frame.opener) from exc
        frames[-1].operands.append(boost)
        return False

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
        positional, keywords = self.arguments(name)
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

    def arguments(self, name: str) -> tuple[list[Any], dict[str, Any]]:
        """The call's positional and keyword values, up to and including its ``)``."""
        params, variadic = _SIGNATURES[name]
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        if self.accept(")"):
            return positional, keywords
        while True:
            arg_tok = self.tok
            if arg_tok.kind == "NAME" and self.peek_is("="):
                if arg_tok.value not in params or variadic:
                    raise self.error(f"{name}() has no parameter {self.describe(arg_tok)}", arg_tok)
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
                return positional, keywords
            if not self.accept(","):
                raise self.error(f"expected ',' or ')' but found {self.describe(self.tok)}")
            if self.accept(")"):
                return positional, keywords

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
