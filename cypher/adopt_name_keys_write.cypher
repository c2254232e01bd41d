// adopt_name_keys_write — set the normalised name on a batch of entities (by elementId).
:param rows => [{eid: '4:x:0', key: 'euro'}];
UNWIND $rows AS row
MATCH (e:/*entity_label*/`Entity`) WHERE elementId(e) = row.eid
SET /*entity_key*/e.name_key = row.key
RETURN count(e) AS written
