// Base RAG on Neo4j 2026.01+: the SEARCH clause over the chunk vector index (every chunk, U).
// `guidedrag cypher "<expr>" --question "..."` prints real :param values for this template.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding (null
// unless $with_embedding: MMR needs the vectors, Browser does not).
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param with_embedding => false;
CYPHER 25
MATCH (c:/*chunk_label*/`Chunk`)
  SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector LIMIT $fetch_k) SCORE AS score
OPTIONAL MATCH (c)/*part_of*/-[:`PART_OF`]->(d:/*document_label*/`Document`)
RETURN /*chunk_id*/c.id AS id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text,
       score, 2 * score - 1 AS cosine, null AS in_selection,
       CASE WHEN $with_embedding THEN /*chunk_embedding*/c.embedding END AS embedding
ORDER BY score DESC, id
