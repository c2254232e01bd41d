// resolve_entity_scan — the same tiers as resolve_entity for graphs without the entity_names
// full-text index (or names with no letters or digits): aliases are found by a label scan.
// Columns: tier, id.
:param sel_name => 'Rome';
:param sel_key => 'rome';

// @fragment query
MATCH (e:Entity) WHERE e.name = $sel_name RETURN 1 AS tier, e.id AS id
UNION
MATCH (e:Entity) WHERE e.id = $sel_name RETURN 2 AS tier, e.id AS id
UNION
MATCH (e:Entity) WHERE e.name_key = $sel_key RETURN 3 AS tier, e.id AS id
UNION
MATCH (e:Entity) WHERE $sel_name IN e.aliases OR $sel_key IN e.alias_keys
RETURN 4 AS tier, e.id AS id
// @end
;
