// select_type — type(t): chunks that mention an entity whose type property equals $sel_type
// (range index on the entity type).
// Columns (Browser): size, truncated, chunk_ids.
:param sel_type => 'PERSON';

// @fragment set
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_type*/e.type = $sel_type
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
