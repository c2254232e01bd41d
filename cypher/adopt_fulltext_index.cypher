// adopt_fulltext_index — `guidedrag kb adopt`: the full-text index over entity names and aliases
// that typo-tolerant suggestions ("did you mean ...?") and the full-text tagger read. Labels and
// properties come from the schema mapping; the index name from GUIDEDRAG_ENTITY_FULLTEXT_INDEX_NAME.
CREATE FULLTEXT INDEX /*entity_fulltext_index*/`entity_names` IF NOT EXISTS
FOR (e:/*entity_label*/`Entity`) ON EACH [/*entity_name*/e.name, /*entity_aliases*/e.aliases]
