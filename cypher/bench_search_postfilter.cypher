// bench_search_postfilter — what a user writes without GuidedRAG: the vector index's global top
// $fetch_k, then keep the chunks of the wanted group (benchmarks/scale.py). No widening, so a
// small group is often missed. Columns: id, score.
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 50;
:param k => 5;
:param group => 'sel100';

CYPHER 25
MATCH (c:/*chunk_label*/Chunk)
  SEARCH c IN (VECTOR INDEX chunk_embedding FOR $query_vector LIMIT $fetch_k) SCORE AS score
WITH c, score WHERE c['group'] = $group
RETURN /*chunk_id*/c.id AS id, score
ORDER BY score DESC, id
LIMIT $k
