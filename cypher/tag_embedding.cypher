// Embedding entity tagger: entities whose name embeddings lie closest to a text's embedding
// (vector index `entity_name_embedding`, migration V0006). Score is (1 + cos) / 2.
:param index_name => 'entity_name_embedding';
:param query_vector => [x IN range(1, 384) | 0.05];
:param limit => 10;
CALL db.index.vector.queryNodes($index_name, $limit, $query_vector) YIELD node, score
WITH node AS e, score
RETURN /*entity_name*/e.name AS name, score, 2 * score - 1 AS cosine
ORDER BY score DESC, name
