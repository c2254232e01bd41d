// resolve_entity — which entities a name means, in tiers: 1 exact name, 2 id, 3 name_key
// (case/whitespace-insensitive), 4 alias or alias key (full-text candidates, then an exact check).
// The Selector keeps the lowest tier that matched. Index seeks only; no chunk is touched.
// $sel_phrase is the name as a Lucene phrase query ("..." with quotes and backslashes escaped).
// Columns: tier, id.
:param sel_name => 'Rome';
:param sel_key => 'rome';
:param sel_index => 'entity_names';
:param sel_phrase => '"Rome"';

// @fragment query
MATCH (e:Entity) WHERE e.name = $sel_name RETURN 1 AS tier, e.id AS id
UNION
MATCH (e:Entity) WHERE e.id = $sel_name RETURN 2 AS tier, e.id AS id
UNION
MATCH (e:Entity) WHERE e.name_key = $sel_key RETURN 3 AS tier, e.id AS id
UNION
CALL db.index.fulltext.queryNodes($sel_index, $sel_phrase) YIELD node
WITH node AS e WHERE $sel_name IN e.aliases OR $sel_key IN e.alias_keys
RETURN 4 AS tier, e.id AS id
// @end
;
