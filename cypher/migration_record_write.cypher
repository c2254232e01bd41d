// migration_record_write — record one applied migration (merged on its version, so a migration
// re-run for another schema mapping replaces its record).
// Columns: none.
:param version => 0;
:param name => 'example';
:param checksum => 'sha256 of the canonical statements';
:param applied_at => datetime();
:param preset => 'guidedrag';
:param statements => [];
MERGE (m:__GuidedRAGMigration {version: $version})
SET m.name = $name, m.checksum = $checksum, m.applied_at = $applied_at,
    m.schema_preset = $preset, m.statements = $statements
