// Exact cosine ranking inside a selection (the paper's hard steering): every selected chunk is
// scored, so the result is exact and costs one dot product per selected chunk.
// vector.similarity.cosine returns (1 + cos) / 2; the raw cosine is returned beside it.
// Variant rank=plugin: the same ranking through the guidedrag.rank procedure (plugin/, see
// docs/plugin.md), which reads each embedding as a primitive array (kept in its float32 cache
// after the first read) instead of turning 384 stored floats into Cypher values per chunk. It
// returns the top $fetch_k plus any chunk tied with the last, so ORDER BY score DESC, c.id below
// cuts exactly as the Cypher variant.
// `guidedrag cypher "<expr>" --question "..."` prints the :param lines (the question's vector,
// the selection's ids) that make every retrieve_* template run on a real question.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding (null
// unless $with_embedding: MMR needs the vectors, Browser does not).
// @variants rank=cypher|plugin
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param with_embedding => false;
// @variant rank=plugin
:param embedding_property => 'embedding';
// @end-variant
// selection:begin
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
// @variant rank=cypher
WITH c, vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector) AS score, true AS in_selection
// @end-variant
// @variant rank=plugin
WITH collect(c) AS selected
CALL guidedrag.rank(selected, $embedding_property, $query_vector, $fetch_k) YIELD node, score
WITH node AS c, score, true AS in_selection
// @end-variant
ORDER BY score DESC, /*chunk_id*/c.id
LIMIT $fetch_k
// @include chunk_rows rows
