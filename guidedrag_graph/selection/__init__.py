"""The selection stage: an algebra over chunk sets, compiled to one Cypher query.

>>> from guidedrag_graph.selection import entity, hop, parse
>>> expr = entity("Rome") & hop("Rome", ["FOUGHT_IN"])
>>> parse(str(expr)) == expr
True
"""

from guidedrag_graph.selection.compiled_forms import CompiledSelection, CompiledTier
from guidedrag_graph.selection.json_form import from_json
from guidedrag_graph.selection.nodes import (
    All,
    Boost,
    Category,
    Chunks,
    Date,
    Difference,
    Document,
    Entities,
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
    "Entities",
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
    "from_json",
    "hop",
    "khop",
    "near",
    "parse",
    "source",
    "type_",
]
