// select_boost — boost(A: wa, B: wb, ...): every chunk of at least one tier, once, with its boost
// (the largest weight of the tiers holding it) and the name of that best tier. The set a boost
// denotes is U; this is what ranking adds to each chunk's (1 + cos) / 2 score.
// The compiler computes each tier's selection once into a list s<i> (the select_*/set_* fragments)
// and fills the /*tiers*/ list slot (example `[s0, s1]`) with the tiers' lists ordered by weight
// descending, so the smallest tier index holding a chunk is its best tier; $sel_boost_weights and
// $sel_boost_names hold the weights and names in the same order.
// Columns (Browser): id, boost, tier.
:param sel_ids => ['euro'];
:param sel_boost_weights => [0.2, 0.05];
:param sel_boost_names => ["entity('euro')", "near('euro')"];

CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s0
}
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
  MATCH (c0:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  MATCH (c0)/*mentions*/-[:MENTIONS]->(e2:/*entity_label*/Entity)
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e2)
  RETURN collect(DISTINCT c) AS s1
}
// @fragment rows
UNWIND range(0, size($sel_boost_weights) - 1) AS boost_i
UNWIND /*tiers*/[s0, s1][boost_i] AS c
WITH c, min(boost_i) AS boost_i
WITH c, $sel_boost_weights[boost_i] AS boost, $sel_boost_names[boost_i] AS tier
// @end
RETURN /*chunk_id*/c.id AS id, boost, tier
ORDER BY boost DESC, id;
