// select_category — category(c): like type(t) but case-insensitive, for the coarse categories a
// question's semantics name ("person", "Person", "PERSON"). It scans entity types, not chunks.
// The compiler lower-cases the value once, in Python, so only the (short, stored) entity types
// are lower-cased per row, never the user's value; write it lower-case here.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_category => 'person';

// @fragment set
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE toLower(/*entity_type*/e.type) = $sel_category
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
