// select_hop — hop(x, types, depth, direction): chunks that mention an entity 1..depth hops from
// the start entities over the given relation types (the start entities themselves excluded).
// Variant types=any is khop(x, k): over EVERY relation type between entities (A_hop, the
// GraphRAG baseline); the (y:Entity) end keeps the lexical graph (MENTIONS, PART_OF) out without
// listing relation types.
// Breadth-first, one hop per step: each step expands the frontier once, keeps DISTINCT entities
// not seen before, and caps the frontier at $sel_cap (t reports that the cap was hit). No path is
// ever enumerated. The compiler repeats the step section `depth` times; the /*relation*/ slot
// takes the validated types (relation_mode "types") or the generic type (relation_mode
// "property", where /*relation_type*/ filters on the type property) and the direction's arrow.
// Variant out=entities gives the entities reached instead of their chunks (select_entity says why).
// Columns (Browser): size, truncated, chunk_ids (out=entities: the entities' ids).
// @variants types=listed|any out=chunks|entities
:param sel_ids => ['euro'];
// @variant types=listed
:param sel_types => ['IS_CURRENCY_OF'];
// @end-variant
:param sel_cap => 10000;

// @fragment set
CALL () {
  MATCH (x:/*entity_label*/Entity) WHERE /*entity_id*/x.id IN $sel_ids
  WITH collect(DISTINCT x) AS f
  WITH f, f AS v, [] AS reach, false AS t
  // @step
  UNWIND CASE WHEN f = [] THEN [null] ELSE f END AS x
  // @variant types=listed
  OPTIONAL MATCH (x)/*relation*/-[r:IS_CURRENCY_OF]-(y:/*entity_label*/Entity)
  WHERE /*relation_type*/type(r) IN $sel_types AND NOT y IN v
  // @end-variant
  // @variant types=any
  OPTIONAL MATCH (x)-[r]-(y:/*entity_label*/Entity)
  WHERE NOT y IN v
  // @end-variant
  WITH v, reach, t, collect(DISTINCT y) AS nxt
  WITH v + nxt[..$sel_cap] AS v, reach + nxt[..$sel_cap] AS reach,
       t OR size(nxt) > $sel_cap AS t, nxt[..$sel_cap] AS f
  // @end-step
  // @variant out=chunks
  UNWIND CASE WHEN reach = [] THEN [null] ELSE reach END AS y
  OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(y)
  RETURN collect(DISTINCT c) AS s, t
  // @end-variant
  // @variant out=entities
  RETURN reach AS s, t
  // @end-variant
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
