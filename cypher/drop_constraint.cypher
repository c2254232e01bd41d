// drop_constraint — drop one constraint by name (a parameter, never spliced). Used by `migrate`
// when the schema mapping changed, only for constraints its own migrations created.
:param name => 'guidedrag_chunk_id';
DROP CONSTRAINT $name IF EXISTS
