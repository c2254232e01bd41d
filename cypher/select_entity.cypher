// select_entity — entity(x): the chunks that mention any of the given entities. The Selector
// resolves the name (exact name, id, name_key, alias) to entity ids first, so this is an index
// seek on the entity id and one MENTIONS expansion: its cost follows the entity, not the corpus.
// Variant out=entities stops before the chunks and gives the entities themselves: under `auto` a
// tier made of entity terms is listed by its entities first (select_mentioned), so a tier that
// reaches too many chunks to list is never listed (cypher/retrieve_boost.cypher).
// Columns (Browser): size, truncated, chunk_ids (out=entities: the entities' ids).
// @variants out=chunks|entities
:param sel_ids => ['euro'];

// @fragment set
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
  // @variant out=chunks
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  WITH collect(DISTINCT c) AS s
  // @end-variant
  // @variant out=entities
  WITH collect(DISTINCT e) AS s
  // @end-variant
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
