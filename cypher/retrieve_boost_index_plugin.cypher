// Graded tiers through the rank plugin (plugin/, docs/plugin.md) on Neo4j 5.26 (the index
// procedure): the ranking of retrieve_boost_index.cypher in one procedure call.
// guidedrag.rankTiers scores every tier member from its float32 cache (~1 µs per chunk, where
// Cypher's cosine costs ~45), keeps each tier's top $fetch_k and U's top $u_fetch_k, and gives
// each candidate its best tier and boost; Cypher only orders the few candidates. U comes from
// the vector index at $u_fetch_k, over-fetched to $wide_k only when a tier is larger than
// $exact_max (the plugin's cache budget): that tier's top is then taken from U's over-fetched
// top, as in retrieve_boost_index.cypher.
// Columns: id, document_id, document_title, text, score ((1+cos)/2), cosine, in_selection (in
// some tier), embedding, tier (name of the best tier or null), boost, tier_sizes (per tier),
// member_of (indices of every tier holding the chunk; calibration reads it). $limit rows at most.
// $universe: -1, or the index of the tier that is the universe (filters: every candidate is
// in it, so U's candidates outside it are dropped; retrieval/filters.py).
// Replace $query_vector with a real query embedding (e.g. from `guidedrag retrieve --json`).
:param sel_0_ids => ['euro'];
:param sel_1_ids => ['euro'];
:param sel_1_cap => 10000;
:param query_vector => [x IN range(1, 384) | 0.05];
:param index_name => 'chunk_embedding';
:param fetch_k => 5;
:param u_fetch_k => 5;
:param wide_k => 50;
:param exact_max => 500;
:param tier_weights => [0.1, 0.05];
:param tier_names => ['E', 'N'];
:param limit => 5;
:param with_embedding => false;
:param universe => -1;
:param embedding_property => 'embedding';
// selection:begin
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s0
}
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_1_ids
  OPTIONAL MATCH (:/*chunk_label*/Chunk)-[:MENTIONS]->(e)<-[:MENTIONS]-(:/*chunk_label*/Chunk)-[:MENTIONS]->(e2:/*entity_label*/Entity)
  WITH collect(DISTINCT e) + collect(DISTINCT e2) AS ents
  UNWIND ents AS e
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s1
}
// selection:end
WITH /*tiers*/[s0, s1] AS tiers
CALL (tiers) {
  CALL db.index.vector.queryNodes($index_name,
    CASE WHEN all(s IN tiers WHERE size(s) <= $exact_max) THEN $u_fetch_k ELSE $wide_k END,
    $query_vector) YIELD node
  WITH collect(node) AS found
  RETURN [n IN found WHERE $universe < 0 OR n IN tiers[$universe]] AS wide
}
CALL guidedrag.rankTiers(tiers, $tier_weights, wide, $embedding_property, $query_vector, $fetch_k,
                         {exactMax: $exact_max, uK: $u_fetch_k})
  YIELD node, score, boost, best, memberOf
WITH node AS c, score, boost, best, memberOf AS member_of, [s IN tiers | size(s)] AS tier_sizes
ORDER BY score + boost DESC, /*chunk_id*/c.id
LIMIT $limit
OPTIONAL MATCH (c)/*part_of*/-[:PART_OF]->(d:/*document_label*/Document)
RETURN /*chunk_id*/c.id AS id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text,
       score, 2 * score - 1 AS cosine, best IS NOT NULL AS in_selection,
       CASE WHEN $with_embedding THEN /*chunk_embedding*/c.embedding END AS embedding,
       $tier_names[best] AS tier, boost, tier_sizes, member_of
ORDER BY score + boost DESC, id
