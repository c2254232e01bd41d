// select_entity — entity(x): the chunks that mention any of the given entities. The Selector
// resolves the name (exact name, id, name_key, alias) to entity ids first, so this is an index
// seek on the entity id and one MENTIONS expansion: its cost follows the entity, not the corpus.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_ids => ['euro'];

// @fragment set
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
