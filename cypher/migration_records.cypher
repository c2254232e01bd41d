// migration_records — what `guidedrag migrate` applied: one node per migration file, with the
// checksum of what it ran, when, for which schema preset, and the statements themselves.
// Columns: version, checksum, applied_at, schema_preset, statements.
MATCH (m:__GuidedRAGMigration)
RETURN m.version AS version, m.checksum AS checksum, toString(m.applied_at) AS applied_at,
       m.schema_preset AS schema_preset, m.statements AS statements
