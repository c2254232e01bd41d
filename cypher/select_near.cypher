// select_near — near(x, depth): co-mention neighbourhood, for KGs whose relation triples are
// sparse. Each step grows the entity set by every entity mentioned in a chunk that mentions one
// of them (capped at $sel_cap entities; t reports the cap); the result is every chunk mentioning
// an entity of the final set, so near(x) contains entity(x). The step repeats `depth` times.
// Variant out=entities gives the final entity set instead of its chunks (select_entity says why).
// Variant walk=plugin takes each step with the rank plugin's guidedrag.nearStep (plugin/: the same
// entities in the same order, walked by the kernel's cursors instead of one Cypher row per mention;
// auto's tiers use it when the server lists the function). $tier_* name the schema for it
// (strings: Browser sets no map parameter from a :param line).
// Columns (Browser): size, truncated, chunk_ids (out=entities: the entities' ids).
// @variants out=chunks|entities walk=cypher|plugin
:param sel_ids => ['euro'];
:param sel_cap => 10000;
:param tier_chunk_label => 'Chunk';
:param tier_entity_label => 'Entity';
:param tier_mentions => 'MENTIONS';
:param tier_direction => 'out';

// @fragment set
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
  WITH collect(DISTINCT e) AS ents, false AS t
  // @step
  // @variant walk=cypher
  UNWIND CASE WHEN ents = [] THEN [null] ELSE ents END AS e
  OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  OPTIONAL MATCH (c)/*mentions*/-[:MENTIONS]->(e2:/*entity_label*/Entity)
  WITH ents, t, collect(DISTINCT e2) AS more
  WITH ents + [y IN more WHERE NOT y IN ents] AS grown, t
  WITH grown[..$sel_cap] AS ents, t OR size(grown) > $sel_cap AS t
  // @end-variant
  // @variant walk=plugin
  WITH guidedrag.nearStep(ents, $sel_cap, $tier_chunk_label, $tier_entity_label, $tier_mentions,
    $tier_direction) AS step, t
  WITH step.entities AS ents, t OR step.truncated AS t
  // @end-variant
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
