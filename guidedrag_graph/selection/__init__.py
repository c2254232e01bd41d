"""The selection stage: an algebra over chunk sets, compiled to one Cypher query (DESIGN §4).

>>> from guidedrag_graph.selection import entity, hop, parse
>>> expr = entity("Rome") & hop("Rome", ["FOUGHT_IN"])
>>> parse(str(expr)) == expr
True
"""

from guidedrag_graph.selection.ast import (
    All,
    Boost,
    Category,
    Chunks,
    Date,
    Difference,
    Document,
    Entity,
    Expr,
    Hop,
    Intersect,
    KHop,
    Near,
    Source,
    SymDiff,
    Tier,
    Type,
    Union,
    all_,
    boost,
    category,
    chunks,
    date,
    document,
    entity,
    hop,
    khop,
    near,
    source,
    type_,
)
from guidedrag_graph.selection.compiler import CompiledSelection, CompiledTier
from guidedrag_graph.selection.parser import parse
from guidedrag_graph.selection.selector import (
    EmptySelection,
    PreparedSelection,
    Selector,
    SizeNode,
)

__all__ = [
    "All",
    "Boost",
    "Category",
    "Chunks",
    "CompiledSelection",
    "CompiledTier",
    "Date",
    "Difference",
    "Document",
    "EmptySelection",
    "Entity",
    "Expr",
    "Hop",
    "Intersect",
    "KHop",
    "Near",
    "PreparedSelection",
    "Selector",
    "SizeNode",
    "Source",
    "SymDiff",
    "Tier",
    "Type",
    "Union",
    "all_",
    "boost",
    "category",
    "chunks",
    "date",
    "document",
    "entity",
    "hop",
    "khop",
    "near",
    "parse",
    "source",
    "type_",
]
