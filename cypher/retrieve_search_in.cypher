// Ranking inside a selection WITHIN the vector index (Neo4j 2026.06+): the selection's chunk ids
// filter the index search itself (the index is declared WITH [c.id], migration V0005), so large
// selections cost an index search instead of one dot product per selected chunk.
// `guidedrag cypher "<expr>" --question "..."` prints real :param values for this template.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding (null
// unless $with_embedding: MMR needs the vectors, Browser does not).
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param with_embedding => false;
CYPHER 25
// selection:begin
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
WITH collect(/*chunk_id*/c.id) AS selected_ids
MATCH (c:/*chunk_label*/`Chunk`)
  SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
               WHERE /*chunk_id*/c.id IN selected_ids LIMIT $fetch_k) SCORE AS score
WITH c, score, true AS in_selection
// @include chunk_rows rows
ORDER BY score DESC, id
