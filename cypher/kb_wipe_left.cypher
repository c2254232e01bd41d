// kb_wipe_left — the chunk, document and entity nodes `kb wipe` leaves (see kb_wipe): those
// without the :__GuidedRAGLoaded label the loader gives every node it creates — another tool's,
// the user's, or a KB loaded before the label. Counted and reported, never deleted by default.
// Columns: chunks, documents, entities.
CALL () { MATCH (n:/*chunk_label*/Chunk) WHERE NOT n:__GuidedRAGLoaded RETURN count(n) AS chunks }
CALL () { MATCH (n:/*document_label*/Document) WHERE NOT n:__GuidedRAGLoaded RETURN count(n) AS documents }
CALL () { MATCH (n:/*entity_label*/Entity) WHERE NOT n:__GuidedRAGLoaded RETURN count(n) AS entities }
RETURN chunks, documents, entities
