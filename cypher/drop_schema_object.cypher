// drop_schema_object — drop one index (variant kind=index) or constraint (kind=constraint) by
// name (a parameter, never spliced). Used by `migrate` when the schema mapping changed and by
// `kb adopt --drop`, only for indexes and constraints this project created.
// @variants kind=index|constraint
// @variant kind=index
:param name => 'guidedrag_entity_name_key';
DROP INDEX $name IF EXISTS
// @end-variant
// @variant kind=constraint
:param name => 'guidedrag_chunk_id';
DROP CONSTRAINT $name IF EXISTS
// @end-variant
