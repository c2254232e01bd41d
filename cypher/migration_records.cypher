// migration_records — what `guidedrag migrate` applied: one node per migration file, with the
// checksum of what it ran, when, for which schema preset, the statements themselves, the
// definitions of the objects it created (`owned`, JSON) and, for a run that did not complete,
// the statements and index prefix it was running (`pending_*`).
// Columns: version, checksum, applied_at, schema_preset, statements, owned, pending_statements, pending_prefix.
MATCH (m:__GuidedRAGMigration)
RETURN m.version AS version, m.checksum AS checksum, toString(m.applied_at) AS applied_at,
       m.schema_preset AS schema_preset, m.statements AS statements, m.owned AS owned,
       m.pending_statements AS pending_statements, m.pending_prefix AS pending_prefix
