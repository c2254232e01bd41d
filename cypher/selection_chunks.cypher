// The chunks of a selection with their documents: what `guidedrag cypher "<expr>"` prints for
// Neo4j Browser. Ids, titles and text only, never the embedding (a `RETURN c` would fill every
// row with the chunk's 384 floats).
// Columns: chunk_id, document_id, document_title, text.
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
// selection:begin
MATCH (c:`Chunk`) WHERE c.id IN $sel_chunk_ids
// selection:end
OPTIONAL MATCH (c)-[:`PART_OF`]->(d:`Document`)
RETURN c.id AS chunk_id, d.id AS document_id, d.title AS document_title, c.text AS text
ORDER BY chunk_id
