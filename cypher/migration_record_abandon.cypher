// migration_record_abandon — a migration run failed and what it created was dropped again: clear
// its in-progress marks and put back the ownership list it started with; a record that never
// completed (no checksum) is deleted, so the migration is plainly pending again.
// Columns: none.
:param version => 0;
:param owned => [];
MATCH (m:__GuidedRAGMigration {version: $version})
REMOVE m.pending_statements, m.pending_prefix
SET m.owned = $owned
WITH m
WHERE m.checksum IS NULL
DELETE m
