// adopt_name_keys_read — entities that have a name but no normalised name yet (Python computes
// the key: NFKC, casefold, single spaces, which Cypher's toLower cannot match).
// Columns: eid, name.
MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_name*/e.name IS NOT NULL AND /*entity_key*/e.name_key IS NULL
RETURN elementId(e) AS eid, toString(/*entity_name*/e.name) AS name
