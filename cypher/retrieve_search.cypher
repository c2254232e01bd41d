// Base RAG: the approximate vector index over every chunk (U). Variant u_search=search: the
// SEARCH clause (Neo4j 2026.01+); u_search=index: db.index.vector.queryNodes, the procedure that
// both the 5.26 LTS and the 2026 line understand.
// `guidedrag cypher "<expr>" --question "..."` prints real :param values for this template.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding (null
// unless $with_embedding: MMR needs the vectors, Browser does not).
// @variants u_search=search|index
// @variant u_search=index
:param index_name => 'chunk_embedding';
// @end-variant
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param with_embedding => false;
// @variant u_search=search
CYPHER 25
MATCH (c:/*chunk_label*/`Chunk`)
  SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector LIMIT $fetch_k) SCORE AS score
WITH c, score, null AS in_selection
// @end-variant
// @variant u_search=index
CALL db.index.vector.queryNodes($index_name, $fetch_k, $query_vector) YIELD node, score
WITH node AS c, score, null AS in_selection
// @end-variant
// @include chunk_rows rows
ORDER BY score DESC, id
