// adopt_name_keys_remove — `guidedrag kb adopt --drop`: remove the normalised names adopt wrote,
// and only those (the entities it marked :__GuidedRAGNameKey; a key the entity had before adopt
// has no mark and stays). Columns: removed.
MATCH (e:__GuidedRAGNameKey)
WITH e LIMIT 10000
REMOVE /*entity_key*/e.name_key, e:__GuidedRAGNameKey
RETURN count(e) AS removed
