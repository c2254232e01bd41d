// select_none — the empty set: a term whose name did not resolve (unknown entity, unknown
// relation type, unknown document). It keeps the query valid and the rest of the expression
// meaningful, e.g. entity('Rome') | entity('Atlantis') is entity('Rome').
// Columns (Browser): size, truncated, chunk_ids.
:param sel_unused => null;

// @fragment set
CALL () {
  RETURN [] AS s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, s AS chunk_ids;
