// kb_wipe — `guidedrag kb wipe` and `guidedrag eval --reload`: delete the KB, 5000 nodes a call
// (migrations and indexes stay). The caller runs a fragment until it deletes nothing.
// `loaded` deletes only the nodes the loader created (the :__GuidedRAGLoaded label, set on
// CREATE, never on a node a MERGE found): another tool's nodes beside the KB, and a user's
// entity or document a bundle merged onto, stay. `chunks`, `documents` and `entities` delete
// every node with the mapped label (`kb wipe --force` only). `left` counts what `loaded` leaves.
// Columns: deleted (left: chunks, documents, entities).
:param unused => null;

// @fragment loaded
MATCH (n:__GuidedRAGLoaded) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS deleted
// @end
;

// @fragment left
CALL () { MATCH (n:/*chunk_label*/Chunk) WHERE NOT n:__GuidedRAGLoaded RETURN count(n) AS chunks }
CALL () { MATCH (n:/*document_label*/Document) WHERE NOT n:__GuidedRAGLoaded RETURN count(n) AS documents }
CALL () { MATCH (n:/*entity_label*/Entity) WHERE NOT n:__GuidedRAGLoaded RETURN count(n) AS entities }
RETURN chunks, documents, entities
// @end
;

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
