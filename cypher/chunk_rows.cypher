// chunk_rows — the rows every retrieve_* query returns, in one place: for each ranked chunk c
// (bound with its score and in_selection), its id, its document's id and title, its text, the
// score ((1 + cos) / 2, as vector.similarity.cosine), the raw cosine beside it, in_selection
// (true inside a selection, null over every chunk, whether in a tier for graded tiers) and the
// embedding (null unless $with_embedding: MMR needs the vectors, Browser does not).
// The retrieve_* templates take the fragment with `// @include chunk_rows rows`; a query adds
// its own columns after it on lines that start with a comma, and its own ORDER BY.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding.
:param with_embedding => false;
MATCH (c:/*chunk_label*/Chunk)
WITH c, 1.0 AS score, null AS in_selection
LIMIT 1
// @fragment rows
OPTIONAL MATCH (c)/*part_of*/-[:PART_OF]->(d:/*document_label*/Document)
RETURN /*chunk_id*/c.id AS id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text,
       score, 2 * score - 1 AS cosine, in_selection,
       CASE WHEN $with_embedding THEN /*chunk_embedding*/c.embedding END AS embedding
// @end
