// select_near — near(x, depth): co-mention neighbourhood, for KGs whose relation triples are
// sparse. Each step grows the entity set by every entity mentioned in a chunk that mentions one
// of them (capped at $sel_cap entities; t reports the cap); the result is every chunk mentioning
// an entity of the final set, so near(x) contains entity(x). The step repeats `depth` times.
// Variant out=entities gives the final entity set instead of its chunks (select_entity says why).
// Columns (Browser): size, truncated, chunk_ids (out=entities: the entities' ids).
// @variants out=chunks|entities
:param sel_ids => ['euro'];
:param sel_cap => 10000;

// @fragment set
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
  WITH collect(DISTINCT e) AS ents, false AS t
  // @step
  UNWIND CASE WHEN ents = [] THEN [null] ELSE ents END AS e
  OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  OPTIONAL MATCH (c)/*mentions*/-[:MENTIONS]->(e2:/*entity_label*/Entity)
  WITH ents, t, collect(DISTINCT e2) AS more
  WITH ents + [y IN more WHERE NOT y IN ents] AS grown, t
  WITH grown[..$sel_cap] AS ents, t OR size(grown) > $sel_cap AS t
  // @end-step
  // @variant out=chunks
  UNWIND CASE WHEN ents = [] THEN [null] ELSE ents END AS e
  OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s, t
  // @end-variant
  // @variant out=entities
  RETURN ents AS s, t
  // @end-variant
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
