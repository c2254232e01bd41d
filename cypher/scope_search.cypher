// scope_search — auto's U inside a property scope, from the vector index (retrieve_boost's
// `scope=property` variant; guidedrag_graph/retrieval/plans.py's scope_search puts it after the
// scope's prelude):
// a SEARCH whose WHERE is the scope's own property predicate (and the request filter's, ANDed),
// as selection/chunk_filters.py compiles it, on properties the index declares WITH [c.p, ...]
// (retrieval/scope_predicate.py says which predicates the SEARCH takes). The in-scope chunk ids
// are not listed for it. `scope_top` is the $wide_k best in-scope chunks, best first (ties by id).
// Run as-is: the example predicate is on the chunk id, which migration V0005 declares.
// Columns: found.
:param query_vector => [x IN range(1, 384) | 0.05];
:param wide_k => 50;
CYPHER 25
// @fragment open
CALL () {
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 WHERE
// @end
                 /*chunk_id*/c.id >= ''
// @fragment close
                 LIMIT $wide_k) SCORE AS score
  WITH c ORDER BY score DESC, /*chunk_id*/c.id
  RETURN collect(c) AS scope_top
}
// @end
RETURN size(scope_top) AS found
