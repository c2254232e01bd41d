// Ranking inside a selection with the planner's choice made in the query itself, so the
// question costs ONE round trip (no size query first): a selection of at most $exact_max chunks
// is ranked exactly, a larger one within the vector index (SEARCH ... WHERE c.id IN ..., Neo4j
// 2026.06+, the index declared WITH [c.id]), asking it for $wide_k (an over-fetch, the recall
// guard) and keeping the best $fetch_k. Variant rank=cypher ranks exactly with
// vector.similarity.cosine over every member (path 'exact'); rank=plugin through the
// guidedrag.rank procedure (plugin/, docs/plugin.md; ~1 µs per chunk, path 'plugin'), with
// $exact_max its cache budget.
// selection_size and path ('exact', 'plugin' or 'search_in') come back on every row; an empty
// selection gives one row whose id is null.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding,
// selection_size, path.
// @variants rank=cypher|plugin
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param wide_k => 20;
:param exact_max => 500;
:param with_embedding => false;
// @variant rank=plugin
:param embedding_property => 'embedding';
// @end-variant
CYPHER 25
// selection:begin
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
WITH collect(c) AS selected
OPTIONAL CALL (selected) {
  WITH selected WHERE size(selected) <= $exact_max
  // @variant rank=cypher
  UNWIND selected AS c
  WITH c, vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector) AS score
  ORDER BY score DESC, /*chunk_id*/c.id
  LIMIT $fetch_k
  RETURN c, score, 'exact' AS path
  // @end-variant
  // @variant rank=plugin
  CALL guidedrag.rank(selected, $embedding_property, $query_vector, $fetch_k) YIELD node, score
  RETURN node AS c, score, 'plugin' AS path
  // @end-variant
  UNION
  WITH selected WHERE size(selected) > $exact_max
  WITH [n IN selected | /*chunk_id*/n.id] AS selected_ids
  MATCH (c:/*chunk_label*/`Chunk`)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 WHERE /*chunk_id*/c.id IN selected_ids LIMIT $wide_k) SCORE AS score
  RETURN c, score, 'search_in' AS path
}
WITH selected, c, score, path, true AS in_selection
ORDER BY score DESC, /*chunk_id*/c.id
LIMIT $fetch_k
// @include chunk_rows rows
       , size(selected) AS selection_size, path
ORDER BY score DESC, id
