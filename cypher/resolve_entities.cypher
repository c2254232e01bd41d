// resolve_entities — resolve_entity for many names in one round trip (entity(['a', 'b', ...])):
// per name n, the tiers 1 exact name, 2 id, 3 name_key, each an index seek. The Selector keeps
// each name's lowest tier, and asks the "alias" fragment only for the names that matched nothing.
// Columns: n, tier, id (n: the name's position in $sel_names).
:param sel_names => ['Euro', 'Roma', 'no such entity'];
:param sel_keys => ['euro', 'roma', 'no such entity'];

// @fragment query
UNWIND range(0, size($sel_names) - 1) AS n
CALL (n) {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_name*/e.name = $sel_names[n] RETURN 1 AS tier, /*entity_id*/e.id AS id
  UNION
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id = $sel_names[n] RETURN 2 AS tier, /*entity_id*/e.id AS id
  UNION
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_key*/e.name_key = $sel_keys[n] RETURN 3 AS tier, /*entity_id*/e.id AS id
}
RETURN n, tier, id
// @end
;

// The alias tier for several names: one scan of the entities (never of chunks).
// @fragment alias
MATCH (e:/*entity_label*/Entity)
WITH e, [n IN range(0, size($sel_names) - 1)
         WHERE $sel_names[n] IN /*entity_aliases*/e.aliases OR $sel_keys[n] IN /*entity_alias_keys*/e.alias_keys] AS hits
UNWIND hits AS n
RETURN n, 4 AS tier, /*entity_id*/e.id AS id
// @end
;
