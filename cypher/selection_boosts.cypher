// selection_boosts — every chunk of at least one tier of a boost(...), with its boost and the
// name of its best tier (`Selector.boosts`). The compiler's "boosted" fragment (each tier's list,
// then select_boost's rows) replaces the example between the markers.
// Columns: id, boost, tier.
:param sel_ids => ['euro'];
:param sel_boost_weights => [0.2];
:param sel_boost_names => ["entity('euro')"];
// selection:begin
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s0
}
UNWIND range(0, size($sel_boost_weights) - 1) AS boost_i
UNWIND /*tiers*/[s0][boost_i] AS c
WITH c, min(boost_i) AS boost_i
WITH c, $sel_boost_weights[boost_i] AS boost, $sel_boost_names[boost_i] AS tier
// selection:end
RETURN /*chunk_id*/c.id AS id, boost, tier
