// Uniqueness constraints for the ids the loader MERGEs on; each also gives the lookup index.
CREATE CONSTRAINT guidedrag_migration_version IF NOT EXISTS
FOR (m:__GuidedRAGMigration) REQUIRE m.version IS UNIQUE;
CREATE CONSTRAINT guidedrag_document_id IF NOT EXISTS
FOR (d:{{document_label}}) REQUIRE d.{{document_id}} IS UNIQUE;
CREATE CONSTRAINT guidedrag_chunk_id IF NOT EXISTS
FOR (c:{{chunk_label}}) REQUIRE c.{{chunk_id}} IS UNIQUE;
CREATE CONSTRAINT guidedrag_entity_id IF NOT EXISTS
FOR (e:{{entity_label}}) REQUIRE e.{{entity_id}} IS UNIQUE;
