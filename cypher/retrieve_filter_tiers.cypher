// retrieve_filter_tiers — auto's tiers under neo4j-graphrag metadata filters
// (guidedrag_graph/retrieval/filters.py). After the tiers' prelude, `universe_open` ...
// `universe_close` binds `u` to every chunk that passes the filter (auto's U: the ranking query's
// $universe tier, so no candidate outside it is ranked, however many chunks pass), and each tier
// list `s` is narrowed to its members that pass (`tier_open` ... `tier_close`, into `f`). The
// compiler writes the condition between the fragments (the example below: position <= $flt_0).
// Columns: universe, tier (chunks that pass; members of the example tier that pass).
:param flt_0 => 1;
:param sel_ids => ['euro'];
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s
}
// @fragment universe_open
CALL () {
  MATCH (c:/*chunk_label*/Chunk)
  WITH c WHERE
// @end
  c.`position` <= $flt_0
// @fragment universe_close
  RETURN collect(c) AS u
}
// @end
// @fragment tier_open
CALL (s) {
  UNWIND s AS c
  WITH c WHERE
// @end
  c.`position` <= $flt_0
// @fragment tier_close
  RETURN collect(c) AS f
}
// @end
RETURN size(u) AS universe, size(f) AS tier;
