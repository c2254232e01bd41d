// drop_index — drop one index by name (a parameter, never spliced). Used by `migrate` when the
// mapping changed and by `kb adopt --drop`, only for indexes this project created.
:param name => 'guidedrag_entity_name_key';
DROP INDEX $name IF EXISTS
