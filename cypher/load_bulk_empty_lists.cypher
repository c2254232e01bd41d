// load_bulk_empty_lists — the importer writes no property for an empty array, the transactional
// loader stores []: give imported entities without aliases the same empty lists, 10k per call.
// Columns: n.
MATCH (e:Entity) WHERE e.aliases IS NULL OR e.alias_keys IS NULL
WITH e LIMIT 10000
SET e.aliases = coalesce(e.aliases, []), e.alias_keys = coalesce(e.alias_keys, [])
RETURN count(e) AS n
