// Uniqueness constraints for the ids the loader MERGEs on; each also gives the lookup index.
CREATE CONSTRAINT /*migration_version_constraint*/guidedrag_migration_version IF NOT EXISTS
FOR (m:__GuidedRAGMigration) REQUIRE m.version IS UNIQUE;
CREATE CONSTRAINT /*document_id_constraint*/guidedrag_document_id IF NOT EXISTS
FOR (d:/*document_label*/Document) REQUIRE /*document_id*/d.id IS UNIQUE;
CREATE CONSTRAINT /*chunk_id_constraint*/guidedrag_chunk_id IF NOT EXISTS
FOR (c:/*chunk_label*/Chunk) REQUIRE /*chunk_id*/c.id IS UNIQUE;
CREATE CONSTRAINT /*entity_id_constraint*/guidedrag_entity_id IF NOT EXISTS
FOR (e:/*entity_label*/Entity) REQUIRE /*entity_id*/e.id IS UNIQUE;
