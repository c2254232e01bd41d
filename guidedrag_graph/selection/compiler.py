"""Compile a resolved selection expression into ONE parameterised Cypher fragment.

Plan: every distinct leaf becomes a ``CALL () { ... }`` subquery (from its ``select_*`` template)
that returns one row: the DISTINCT list of its chunks ``s<i>`` and whether a hop cap cut it
``t<i>``. Each set operation is one ``WITH *, ... AS s<j>`` over two lists (``set_*``
templates); the result is unwound so ``c`` is bound to each selected chunk exactly once
(``select_finish``). Equal sub-expressions are compiled once. Intersections iterate the smaller
list, decided at run time, so the most selective operand drives and the other only filters.

Names are resolved before compiling (``resolver.py``); the compiler only sees entity ids, document
ids and relation types that exist, and splices relation types only escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from guidedrag_graph.schema.presets import SchemaMapping
from guidedrag_graph.selection import nodes as A
from guidedrag_graph.selection.compiled_forms import CompiledPlan, CompiledTier
from guidedrag_graph.selection.compiled_forms import CompiledSelection as CompiledSelection
from guidedrag_graph.selection.entity_tiers import (
    NO_MEMBERS,
    mentioning_leaves,
    tier_walk_params,
    union_leaves,
)
from guidedrag_graph.selection.primitives import Resolved
from guidedrag_graph.templates import queries as T


def compile_plan(
    expr: A.Expr,
    resolved: Mapping[A.Expr, Resolved],
    schema: SchemaMapping,
    *,
    hop_cap: int,
    force_sets: bool = False,
    by_entities: bool = False,
    walk: str = "cypher",
    param_prefix: str = "sel",
    group_documents: bool = False,
) -> CompiledPlan:
    """Compile ``expr``; ``resolved`` maps each name-bearing leaf to what it resolved to.

    ``by_entities`` (a boost ranked by ``retrieve_boost``: ``auto``'s tiers): a tier made only
    of ``MENTIONING`` terms is compiled as its entities and listed only when listing pays off
    (``cypher/select_mentioned.cypher``); its member variable then says how to test a chunk.
    ``walk`` (``RankFacts.variant``'s ``walk`` axis): ``plugin`` walks those tiers' near()
    steps and their listing with the rank plugin's functions, the same sets in the same order.
    ``param_prefix``: the leaves' parameters are ``$<prefix>_<i>_<key>`` (a scope compiles with
    ``scp`` so that its parameters and a selection's meet in one query). ``group_documents``
    (a scope): a union made only of ``document()`` terms is ONE subquery over all their ids,
    as a union of entity terms always is (a scope may list a thousand documents)."""
    if isinstance(expr, A.All) and not force_sets:
        body = T.fragment("select_all", "alone", schema) + "\n"
        return CompiledPlan(body, {}, 0, {}, is_all=True)
    builder = _Builder(
        resolved, schema, hop_cap, merge=not force_sets, walk=walk, prefix=param_prefix
    )
    builder.group_documents = group_documents and not force_sets
    if isinstance(expr, A.Boost):
        return _compile_boost(
            expr, builder, force_sets=force_sets, by_entities=by_entities and not force_sets
        )
    result = builder.node(expr)
    return CompiledPlan(
        "".join(builder.parts),
        builder.params,
        result,
        builder.index,
        steps=builder.steps,
        projected=builder.projected,
    )


def _compile_boost(
    expr: A.Boost, builder: _Builder, *, force_sets: bool, by_entities: bool = False
) -> CompiledPlan:
    """Each tier's selection compiled once into a list; with ``force_sets`` (sizes) the boost
    node itself is U, collected like ``all()`` inside an expression."""
    tiers: list[CompiledTier] = []
    for _, tier in expr.ordered():
        leaves = mentioning_leaves(tier.expr) if by_entities else None
        if leaves is not None:
            i, flag = builder.mentioned(tier.expr, leaves)
            tiers.append(CompiledTier(f"s{i}", tier.weight, tier.label, flag, f"m{i}"))
            continue
        i = builder.node(tier.expr)
        tiers.append(CompiledTier(f"s{i}", tier.weight, tier.label, f"t{i}"))
    none = T.fragment("select_mentioned", "none", builder.schema, variables={"m": NO_MEMBERS})
    builder.parts.append(none.strip() + "\n")
    builder.params["sel_boost_weights"] = [t.weight for t in tiers]
    builder.params["sel_boost_names"] = [t.name for t in tiers]
    result = -1
    if force_sets:
        result = builder.node(A.All())
        builder.index[expr] = result
    return CompiledPlan(
        "".join(builder.parts),
        builder.params,
        result,
        builder.index,
        tiers=tuple(tiers),
        steps=builder.steps,
        projected=builder.projected,
    )


class _Builder:
    def __init__(
        self,
        resolved: Mapping[A.Expr, Resolved],
        schema: SchemaMapping,
        hop_cap: int,
        *,
        merge: bool = True,
        walk: str = "cypher",
        prefix: str = "sel",
    ) -> None:
        self.resolved = resolved
        self.prefix = prefix
        self.group_documents = False
        self.merge = merge
        self.walk = walk
        self.schema = schema
        self.cap = hop_cap
        self.parts: list[str] = []
        self.params: dict[str, Any] = {}
        self.index: dict[A.Expr, int] = {}
        # Variables of the entity form (``mentioned``), numbered after ``index``'s so that a
        # compile without them numbers its nodes as before.
        self.extra = 0
        self.tier_index: dict[A.Expr, tuple[int, str]] = {}
        self.steps = 0  # set-operation clauses written (CompiledPlan.steps)
        self.projected = 0  # their variables in scope, squared and summed (CompiledPlan)

    def step(self) -> None:
        """Count one set-operation clause: ``WITH *`` carries every earlier part's variables
        (two each: its list and its cap flag) and adds its own two."""
        scope = 2 * (len(self.parts) + 1)
        self.steps += 1
        self.projected += scope * scope

    def node(self, expr: A.Expr) -> int:
        """Compile ``expr`` and everything below it (post-order, explicit stack); its index."""
        stack: list[tuple[A.Expr, bool]] = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if node in self.index:  # equal sub-expressions are computed once
                continue
            group = self.entity_group(node)
            documents = self.document_group(node) if group is None else None
            i = len(self.index) + self.extra
            chain = self.chain(node) if group is None and documents is None else None
            if chain is not None:
                pending = [op for op in chain if op not in self.index]
                if pending:
                    stack.append((node, True))
                    stack.extend((op, False) for op in reversed(pending))
                    continue
                if len(chain) == 1:  # A | A is A
                    self.index[node] = self.index[chain[0]]
                    continue
                assert isinstance(node, A.BinaryOp)
                text = self.many(node, chain, i)
                self.step()
            elif group is not None:
                text = self.leaf(A.Entities(("",)), i, self.merged(group))
            elif documents is not None:
                text = self.leaf(A.Document(""), i, self.merged(documents))
            elif isinstance(node, A.BinaryOp):
                if not ready:
                    stack.append((node, True))
                    stack.extend((k, False) for k in (node.right, node.left))
                    continue
                text = self.binary(node, i)
                self.step()
            else:
                text = self.leaf(node, i)
            self.parts.append(text.strip() + "\n")
            self.index[node] = i
        return self.index[expr]

    def binary(self, expr: A.BinaryOp, i: int, operands: tuple[int, int] | None = None) -> str:
        """``expr``'s own operation on two compiled nodes (default: its left and right)."""
        left, right = operands or (self.index[expr.left], self.index[expr.right])
        variables = {
            "lhs": f"s{left}",
            "rhs": f"s{right}",
            "tl": f"t{left}",
            "tr": f"t{right}",
            "s": f"s{i}",
            "t": f"t{i}",
        }
        return T.fragment(
            expr.template, "set", self.schema, variables=variables, variant=expr.variant
        )

    def chain(self, expr: A.Expr) -> list[A.Expr] | None:
        """The operands of a chain of unions (any shape) or of a left chain of intersections,
        differences or symmetric differences, in order; None for anything else, and in sizes
        mode (it reports every node).

        Exact, order included: a union tree's list is its operands' lists concatenated in order
        with repeats dropped, and a left chain's list is the left-to-right fold of its operator
        (``set_many`` folds the same way). An operand met again adds nothing to a union or an
        intersection, nor as a later operand of a difference (A - B - B is A - B), so it is
        listed once there; a difference's first operand stays first even when it is subtracted
        again (A - B - A is empty), and a symmetric difference keeps every repeat (A ^ A is
        empty). An operand that is itself an entity group stays one operand (its one subquery).
        Why ``-`` and ``^`` too: their binary steps are one ``WITH *`` clause each, and the
        planner's time for a 200-term chain of them outlived the transaction timeout (issue 34)."""
        if not self.merge or not isinstance(expr, A.Union | A.Intersect | A.Difference | A.SymDiff):
            return None
        kind = type(expr)
        operands: list[A.Expr] = []
        stack: list[A.Expr] = [expr]
        while stack:
            node = stack.pop()
            if type(node) is kind and (node is expr or self.entity_group(node) is None):
                assert isinstance(node, A.BinaryOp)
                if kind is A.Union:
                    stack.extend((node.right, node.left))
                    continue
                operands.append(node.right)  # the left spine is walked, right operands kept
                stack.append(node.left)
                continue
            operands.append(node)
        if kind is not A.Union:
            operands.reverse()
        if kind is A.SymDiff:
            unique = operands
        elif kind is A.Difference:
            unique = operands[:1] + list(dict.fromkeys(operands[1:]))
        else:
            unique = list(dict.fromkeys(operands))
        return unique if len(unique) != 2 or len(operands) != 2 else None

    def many(self, expr: A.BinaryOp, operands: list[A.Expr], i: int) -> str:
        """A chain as one clause (``set_many``, whose variants are named like ``set_op``'s);
        two operands left use the binary fragment."""
        idx = [self.index[op] for op in operands]
        if len(idx) == 2:
            return self.binary(expr, i, (idx[0], idx[1]))
        lists = {"operands": [f"s{j}" for j in idx], "flags": [f"t{j}" for j in idx]}
        return T.fragment(
            "set_many",
            "set",
            self.schema,
            variables={"s": f"s{i}", "t": f"t{i}"},
            lists=lists,
            variant=expr.variant,
        )

    def entity_group(self, expr: A.Expr) -> tuple[A.Expr, ...] | None:
        """The names of a union made only of entity terms (a | b | entity([c, d]) ...), which
        compiles to ONE subquery over all their ids; None otherwise. Sizes mode
        keeps every node (it reports each one)."""
        if not self.merge or not isinstance(expr, A.Union):
            return None
        leaves = union_leaves(expr, lambda node: isinstance(node, A.Leaf) and node.entity_list)
        return None if leaves is None else tuple(leaves)

    def document_group(self, expr: A.Expr) -> tuple[A.Expr, ...] | None:
        """With ``group_documents``: the terms of a union made only of ``document()`` terms
        (compiled as one ``select_document`` over all their ids); None otherwise."""
        if not self.group_documents or not isinstance(expr, A.Union):
            return None
        leaves = union_leaves(expr, lambda node: isinstance(node, A.Document))
        return None if leaves is None else tuple(leaves)

    def merged(self, leaves: tuple[A.Expr, ...]) -> Resolved:
        """What the group's leaves resolved to, together (ids in first-seen order)."""
        ids: dict[str, None] = {}
        for leaf in leaves:
            res = self.resolved.get(leaf, Resolved())
            if not res.empty:
                ids.update(dict.fromkeys(res.ids))
        found = tuple(ids)
        return Resolved(ids=found, empty=not found)

    def fresh(self) -> int:
        self.extra += 1
        return len(self.index) + self.extra - 1

    def mentioned(self, expr: A.Expr, leaves: tuple[A.Expr, ...]) -> tuple[int, str]:
        """A tier of ``MENTIONING`` leaves as its entities: the entity terms together in one
        ``select_entity`` (as ``entity_group`` does), every other leaf in its template's
        ``out=entities`` variant, their union (``set_many``/``set_op``, which are list
        operations), then ``select_mentioned``. Returns the index of the tier's chunk list
        ``s<i>`` (and its member variable ``m<i>``) and its cap flag variable."""
        if expr in self.tier_index:  # two tiers with equal selections share their variables
            return self.tier_index[expr]
        entity_terms = tuple(leaf for leaf in leaves if getattr(leaf, "entity_list", False))
        parts: list[tuple[int, str]] = []
        if entity_terms:
            j = self.fresh()
            text = self.leaf(A.Entities(("",)), j, self.merged(entity_terms), entities=True)
            parts.append((j, text))
        for leaf in leaves:
            if leaf not in entity_terms:
                j = self.fresh()
                parts.append((j, self.leaf(leaf, j, entities=True)))
        for _, text in parts:
            self.parts.append(text.strip() + "\n")
        operands = [j for j, _ in parts]
        if len(operands) == 1:
            x = operands[0]
        else:
            x = self.fresh()
            lists = {
                "operands": [f"s{j}" for j in operands],
                "flags": [f"t{j}" for j in operands],
            }
            union = T.fragment(
                "set_many",
                "set",
                self.schema,
                variables={"s": f"s{x}", "t": f"t{x}"},
                lists=lists,
                variant={"op": "union"},
            )
            self.step()
            self.parts.append(union.strip() + "\n")
        i = self.fresh()
        tier = T.fragment(
            "select_mentioned",
            "set",
            self.schema,
            variables={"x": f"s{x}", "s": f"s{i}", "m": f"m{i}"},
            variant={"walk": self.walk},
        )
        if self.walk == "plugin":
            self.params.update(tier_walk_params(self.schema))
        self.parts.append(tier.strip() + "\n")
        self.tier_index[expr] = (i, f"t{x}")
        return i, f"t{x}"

    def leaf(
        self, expr: A.Expr, i: int, res: Resolved | None = None, *, entities: bool = False
    ) -> str:
        """A leaf's ``select_*`` fragment: its template, values and slots are its own
        (``entities``: its ``out=entities`` variant, the entity set instead of the chunks)."""
        assert isinstance(expr, A.Leaf)
        if res is None:
            res = self.resolved.get(expr, Resolved())
        variables = {"s": f"s{i}", "t": f"t{i}"}
        if res.empty:
            return T.fragment("select_none", "set", self.schema, variables=variables)
        variant = dict(expr.variant)
        if entities:  # the tier's entity set; the plugin's walk where the template has one
            walk = {"walk": self.walk} if "walk" in T.variants(expr.template) else {}
            variant |= {"out": "entities", **walk}
        values = expr.params(res, self.cap)
        for key, value in values.items():
            self.params[f"{self.prefix}_{i}_{key}"] = value
        slots = expr.slots(res)
        relation = (
            T.Relation(tuple(slots["relation_types"]), slots["direction"])
            if "relation_types" in slots
            else None
        )
        return T.fragment(
            expr.template,
            "set",
            self.schema,
            variables=variables,
            params={f"sel_{key}": f"{self.prefix}_{i}_{key}" for key in values},
            steps=expr.hops,
            relation=relation,
            variant=variant,
        )
