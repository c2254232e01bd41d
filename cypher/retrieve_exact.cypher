// Exact cosine ranking inside a selection (the paper's hard steering): every selected chunk is
// scored, so the result is exact and costs one dot product per selected chunk.
// vector.similarity.cosine returns (1 + cos) / 2; the raw cosine is returned beside it.
// `guidedrag cypher "<expr>" --question "..."` prints the :param lines (the question's vector,
// the selection's ids) that make every retrieve_* template run on a real question.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding (null
// unless $with_embedding: MMR needs the vectors, Browser does not).
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param with_embedding => false;
// selection:begin
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
WITH c, vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector) AS score
ORDER BY score DESC, /*chunk_id*/c.id
LIMIT $fetch_k
OPTIONAL MATCH (c)/*part_of*/-[:`PART_OF`]->(d:/*document_label*/`Document`)
RETURN /*chunk_id*/c.id AS id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text,
       score, 2 * score - 1 AS cosine, true AS in_selection,
       CASE WHEN $with_embedding THEN /*chunk_embedding*/c.embedding END AS embedding
