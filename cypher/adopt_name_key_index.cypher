// adopt_name_key_index — `guidedrag kb adopt`: a range index on the normalised entity name, so
// entity('euro') finds 'Euro' by an index seek (resolve_entity tier 3).
CREATE INDEX /*entity_name_key_index*/`guidedrag_entity_name_key` IF NOT EXISTS
FOR (e:/*entity_label*/`Entity`) ON (/*entity_key*/e.name_key)
