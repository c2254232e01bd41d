// adopt_name_keys_remove — `guidedrag kb adopt --drop`: remove the normalised names adopt set
// (only run when the adoption record says adopt added them). Columns: removed.
MATCH (e:`Entity`) WHERE e.name_key IS NOT NULL
WITH e LIMIT 10000
REMOVE e.name_key
RETURN count(e) AS removed
