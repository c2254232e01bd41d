// scope_narrow — how a scope (cypher/scope.cypher, bound first as `scope_u`) is intersected into
// a query (guidedrag_graph/retrieval/in_scope.py): `where` narrows a selection that binds `c`
// (hard and soft steering); `rows` is the scope itself as the selection (all() in a scope);
// `tier_open` ... `tier_close` narrows one of auto's tier lists `s` into `f`, and
// `universe_open` ... `universe_close` binds auto's universe `u` when a filter narrows the scope
// too (a filter's `WITH c WHERE ...` goes between, retrieval/filters.py); `sizes` is
// `guidedrag select`'s sizes counted inside the scope. Run as-is: the example tier narrowed to
// the scope (its size), and whether the scope's rows and its universe agree.
// Columns: sizes, truncated.
:param scp_0_ids => ['wiki:Journal of Mathematical Physics'];
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id IN $scp_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  RETURN collect(DISTINCT c) AS scope_u
}
CALL () {
  MATCH (c:/*chunk_label*/Chunk)
  RETURN collect(c)[..3] AS s
}
// @fragment tier_open
CALL (s, scope_u) {
  UNWIND s AS c
  WITH c WHERE c IN scope_u
// @end
// @fragment tier_close
  RETURN collect(c) AS f
}
// @end
// @fragment universe_open
CALL (scope_u) {
  UNWIND scope_u AS c
// @end
// @fragment universe_close
  RETURN collect(c) AS u
}
// @end
CALL (scope_u) {
// @fragment rows
UNWIND scope_u AS c
// @end
// @fragment where
WITH c WHERE c IN scope_u
// @end
  RETURN count(c) AS narrowed
}
WITH scope_u, f AS s, narrowed <> size(u) AS t
// @fragment sizes
WITH scope_u, /*sizes*/[s] AS lists, /*flags*/[t] AS truncated
RETURN [l IN lists | size([x IN l WHERE x IN scope_u])] AS sizes, truncated
// @end
;
