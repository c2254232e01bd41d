// Base RAG: the approximate vector index over every chunk (U), via the procedure that both the
// 5.26 LTS and the 2026 line understand (2026 prefers retrieve_search.cypher's SEARCH clause).
// `guidedrag cypher "<expr>" --question "..."` prints real :param values for this template.
// Columns: id, document_id, document_title, text, score, cosine, in_selection, embedding (null
// unless $with_embedding: MMR needs the vectors, Browser does not).
:param index_name => 'chunk_embedding';
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param with_embedding => false;
CALL db.index.vector.queryNodes($index_name, $fetch_k, $query_vector) YIELD node, score
WITH node AS c, score
OPTIONAL MATCH (c)/*part_of*/-[:`PART_OF`]->(d:/*document_label*/`Document`)
RETURN /*chunk_id*/c.id AS id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text,
       score, 2 * score - 1 AS cosine, null AS in_selection,
       CASE WHEN $with_embedding THEN /*chunk_embedding*/c.embedding END AS embedding
ORDER BY score DESC, id
