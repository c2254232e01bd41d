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
MATCH (c:`Chunk`) WHERE c.id IN $sel_chunk_ids
// selection:end
WITH c, vector.similarity.cosine(c.embedding, $query_vector) AS score
ORDER BY score DESC, c.id
LIMIT $fetch_k
OPTIONAL MATCH (c)-[:`PART_OF`]->(d:`Document`)
RETURN c.id AS id, d.id AS document_id, d.title AS document_title, c.text AS text,
       score, 2 * score - 1 AS cosine, true AS in_selection,
       CASE WHEN $with_embedding THEN c.embedding END AS embedding
