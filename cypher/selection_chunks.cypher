// The chunks of a selection with their documents: what `guidedrag cypher "<expr>"` prints for
// Neo4j Browser. Ids, titles and text only, never the embedding (a `RETURN c` would fill every
// row with the chunk's 384 floats).
// Columns: chunk_id, document_id, document_title, text.
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
// selection:begin
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
OPTIONAL MATCH (c)/*part_of*/-[:`PART_OF`]->(d:/*document_label*/`Document`)
RETURN /*chunk_id*/c.id AS chunk_id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text
ORDER BY chunk_id
