// kb_wipe — `guidedrag eval --reload`: delete the KB's chunks, documents and entities, 5000 nodes
// a call (migrations and indexes stay). The caller runs each fragment until it deletes nothing.
// Columns: deleted.
:param unused => null;

// @fragment chunks
MATCH (n:/*chunk_label*/Chunk) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS deleted
// @end
;

// @fragment documents
MATCH (n:/*document_label*/Document) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS deleted
// @end
;

// @fragment entities
MATCH (n:/*entity_label*/Entity) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS deleted
// @end
;
