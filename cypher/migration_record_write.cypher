// migration_record_write — record one completed migration (merged on its version, so a migration
// re-run for another schema mapping replaces its record): the statements it ran and the
// definitions of the indexes and constraints it created (`owned`, JSON), which is what makes
// them the project's to drop later. Clears the in-progress marks migration_record_begin set.
// Columns: none.
:param version => 0;
:param name => 'example';
:param checksum => 'sha256 of the canonical statements';
:param applied_at => datetime();
:param preset => 'guidedrag';
:param statements => [];
:param owned => [];
MERGE (m:__GuidedRAGMigration {version: $version})
SET m.name = $name, m.checksum = $checksum, m.applied_at = $applied_at,
    m.schema_preset = $preset, m.statements = $statements, m.owned = $owned
REMOVE m.pending_statements, m.pending_prefix
