// resolve_entity — which entities a name means, in tiers: 1 exact name, 2 id, 3 name_key
// (case/whitespace-insensitive). Index seeks only; no chunk is touched. The Selector keeps the
// lowest tier that matched, and asks resolve_entity_alias only when none did.
// Columns: tier, id.
:param sel_name => 'Euro';
:param sel_key => 'euro';

// @fragment query
MATCH (e:/*entity_label*/Entity) WHERE /*entity_name*/e.name = $sel_name RETURN 1 AS tier, /*entity_id*/e.id AS id
UNION
MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id = $sel_name RETURN 2 AS tier, /*entity_id*/e.id AS id
UNION
MATCH (e:/*entity_label*/Entity) WHERE /*entity_key*/e.name_key = $sel_key RETURN 3 AS tier, /*entity_id*/e.id AS id
// @end
;
