// migration_record_begin — mark a migration run as in progress before its first schema change:
// the statements it is about to run and the index prefix it runs with. A run killed before
// migration_record_write leaves these marks, so `migrate --status` says "partial" and the next
// `migrate` knows what the killed run was doing. A new record has no checksum until it completes.
// Columns: none.
:param version => 0;
:param name => 'example';
:param statements => [];
:param prefix => 'guidedrag';
MERGE (m:__GuidedRAGMigration {version: $version})
SET m.name = $name, m.pending_statements = $statements, m.pending_prefix = $prefix,
    m.owned = coalesce(m.owned, [])
