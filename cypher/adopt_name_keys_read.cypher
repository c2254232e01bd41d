// adopt_name_keys_read — entities that have a name but no normalised name yet (Python computes
// the key: NFKC, casefold, single spaces, which Cypher's toLower cannot match).
// Columns: eid, name.
MATCH (e:`Entity`) WHERE e.name IS NOT NULL AND e.name_key IS NULL
RETURN elementId(e) AS eid, toString(e.name) AS name
