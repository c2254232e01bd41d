// select_khop — khop(x, k): chunks that mention an entity 1..k hops from the start entities over
// EVERY relation type between entities (A_hop, the GraphRAG baseline); start entities excluded.
// Same breadth-first, DISTINCT, capped expansion as select_hop; the (y:Entity) end keeps the
// lexical graph (MENTIONS, PART_OF) out without listing relation types.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_ids => ['euro'];
:param sel_cap => 10000;

// @fragment set
CALL () {
  MATCH (x:/*entity_label*/Entity) WHERE /*entity_id*/x.id IN $sel_ids
  WITH collect(DISTINCT x) AS f
  WITH f, f AS v, [] AS reach, false AS t
  // @step
  UNWIND CASE WHEN f = [] THEN [null] ELSE f END AS x
  OPTIONAL MATCH (x)-[r]-(y:/*entity_label*/Entity)
  WHERE NOT y IN v
  WITH v, reach, t, collect(DISTINCT y) AS nxt
  WITH v + nxt[..$sel_cap] AS v, reach + nxt[..$sel_cap] AS reach,
       t OR size(nxt) > $sel_cap AS t, nxt[..$sel_cap] AS f
  // @end-step
  UNWIND CASE WHEN reach = [] THEN [null] ELSE reach END AS y
  OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(y)
  RETURN collect(DISTINCT c) AS s, t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
