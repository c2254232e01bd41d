// kb_wipe — `guidedrag kb wipe` and `guidedrag eval --reload`: delete the KB, 5000 nodes a call
// (migrations and indexes stay). The caller runs a fragment until it deletes nothing.
// `loaded` deletes only the nodes the loader created (the :__GuidedRAGLoaded label, set on
// CREATE, never on a node a MERGE found): another tool's nodes beside the KB, and a user's
// entity or document a bundle merged onto, stay. `chunks`, `documents` and `entities` delete
// every node with the mapped label (`kb wipe --force` only). `relations` deletes the relations the
// loader drew between two entities it did not create (marked by a property, load_relations),
// after `loaded`, so it scans only what is left. kb_wipe_left counts what `loaded` leaves.
// Columns: deleted.
:param unused => null;

// @fragment loaded
MATCH (n:__GuidedRAGLoaded) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS deleted
// @end
;

// @fragment relations
MATCH (:/*entity_label*/Entity)-[r]->(:/*entity_label*/Entity) WHERE r.__GuidedRAGLoaded = true
WITH r LIMIT 5000 DELETE r RETURN count(*) AS deleted
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
