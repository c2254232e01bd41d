// adopt_name_keys_remove — `guidedrag kb adopt --drop`: remove the normalised names adopt set
// (only run when the adoption record says adopt added them). Columns: removed.
MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_key*/e.name_key IS NOT NULL
WITH e LIMIT 10000
REMOVE /*entity_key*/e.name_key
RETURN count(e) AS removed
