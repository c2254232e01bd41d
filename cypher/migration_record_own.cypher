// migration_record_own — write-ahead ownership: the definition (JSON) of the index or constraint
// the next statement creates, recorded before it runs, so an object made by a run that is killed
// right after is still provably the project's (migrate drops only recorded objects whose live
// definition is the recorded one).
// Columns: none.
:param version => 0;
:param definition => '{"name": "guidedrag_chunk_id"}';
MATCH (m:__GuidedRAGMigration {version: $version})
SET m.owned = [d IN coalesce(m.owned, []) WHERE d <> $definition] + $definition
