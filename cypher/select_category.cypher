// select_category — category(c): like type(t) but case-insensitive, for the coarse categories a
// question's semantics name ("person", "Person", "PERSON"). It scans entity types, not chunks.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_category => 'person';

// @fragment set
CALL () {
  MATCH (e:Entity) WHERE toLower(e.type) = toLower($sel_category)
  MATCH (c:Chunk)-[:MENTIONS]->(e)
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | x.id][..25] AS chunk_ids;
