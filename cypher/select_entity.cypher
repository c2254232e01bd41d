// select_entity — entity(x): the chunks that mention any of the given entities. The Selector
// resolves the name (exact name, id, name_key, alias) to entity ids first, so this is an index
// seek on the entity id and one MENTIONS expansion: its cost follows the entity, not the corpus.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_ids => ['euro'];

// @fragment set
CALL () {
  MATCH (e:Entity) WHERE e.id IN $sel_ids
  MATCH (c:Chunk)-[:MENTIONS]->(e)
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | x.id][..25] AS chunk_ids;
