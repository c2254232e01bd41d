// load_bulk_empty_lists — the importer writes no property for an empty array, the transactional
// loader stores []: give imported entities without aliases the same empty lists, 10k per call.
// Columns: n.
MATCH (e:/*entity_label*/Entity) WHERE /*entity_aliases*/e.aliases IS NULL OR /*entity_alias_keys*/e.alias_keys IS NULL
WITH e LIMIT 10000
SET /*entity_aliases*/e.aliases = coalesce(/*entity_aliases*/e.aliases, []), /*entity_alias_keys*/e.alias_keys = coalesce(/*entity_alias_keys*/e.alias_keys, [])
RETURN count(e) AS n
