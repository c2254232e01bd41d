// resolve_entity_alias — tier 4 of name resolution: entities with this exact alias or alias key.
// Lists are not range-indexed, so this scans entities (never chunks); it runs only for names that
// are neither a name, an id nor a name_key. The full-text index is not used here on purpose: its
// analyzer drops stop words and lowercases differently from name_key, so it could miss a match.
// Columns: tier, id.
:param sel_name => 'Roma';
:param sel_key => 'roma';

// @fragment query
MATCH (e:/*entity_label*/Entity) WHERE $sel_name IN /*entity_aliases*/e.aliases OR $sel_key IN /*entity_alias_keys*/e.alias_keys
RETURN 4 AS tier, /*entity_id*/e.id AS id
// @end
;
