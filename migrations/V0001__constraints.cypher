// Uniqueness constraints for the ids the loader MERGEs on; each also gives the lookup index.
CREATE CONSTRAINT {{index:migration_version}} IF NOT EXISTS
FOR (m:__GuidedRAGMigration) REQUIRE m.version IS UNIQUE;
CREATE CONSTRAINT {{index:document_id}} IF NOT EXISTS
FOR (d:{{document_label}}) REQUIRE d.{{document_id}} IS UNIQUE;
CREATE CONSTRAINT {{index:chunk_id}} IF NOT EXISTS
FOR (c:{{chunk_label}}) REQUIRE c.{{chunk_id}} IS UNIQUE;
CREATE CONSTRAINT {{index:entity_id}} IF NOT EXISTS
FOR (e:{{entity_label}}) REQUIRE e.{{entity_id}} IS UNIQUE;
