// adopt_name_keys_write — set the normalised name on a batch of entities (by elementId) that
// still have none, and mark each with :__GuidedRAGNameKey: the record of which keys adopt wrote,
// so `kb adopt --drop` removes those and never a key the user had. Columns: written.
:param rows => [{eid: '4:x:0', key: 'euro'}];
UNWIND $rows AS row
MATCH (e:/*entity_label*/`Entity`) WHERE elementId(e) = row.eid AND /*entity_key*/e.name_key IS NULL
SET /*entity_key*/e.name_key = row.key, e:__GuidedRAGNameKey
RETURN count(e) AS written
