// Exact cosine ranking inside a selection through the guidedrag.rank procedure (the plugin in
// plugin/, see docs/plugin.md): the same result as retrieve_exact.cypher, but the procedure reads
// each embedding as a primitive array (kept in its float32 cache after the first read) instead
// of turning 384 stored floats into Cypher values per chunk. It returns the top $fetch_k plus any
// chunk tied with the last, so ORDER BY score DESC, c.id below cuts exactly as the Cypher path.
// score = (1 + cos) / 2, as vector.similarity.cosine; the raw cosine is returned beside it.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding.
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param with_embedding => false;
:param embedding_property => 'embedding';
// selection:begin
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
WITH collect(c) AS selected
CALL guidedrag.rank(selected, $embedding_property, $query_vector, $fetch_k) YIELD node, score
WITH node AS c, score
ORDER BY score DESC, /*chunk_id*/c.id
LIMIT $fetch_k
OPTIONAL MATCH (c)/*part_of*/-[:`PART_OF`]->(d:/*document_label*/`Document`)
RETURN /*chunk_id*/c.id AS id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text,
       score, 2 * score - 1 AS cosine, true AS in_selection,
       CASE WHEN $with_embedding THEN /*chunk_embedding*/c.embedding END AS embedding
