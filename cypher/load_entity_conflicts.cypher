// load_entity_conflicts — before a load writes anything: the declared entities of the bundle whose
// id the database already holds under another name (a bundle may not silently rename an entity
// it did not create). Read only. Columns: id, existing, name.
:param rows => [{id: 'euro', name: 'Hijacked Name'}];

UNWIND $rows AS row
MATCH (e:/*entity_label*/Entity {/*entity_id*/id: row.id})
WHERE /*entity_name*/e.name IS NOT NULL AND /*entity_name*/e.name <> row.name
RETURN row.id AS id, /*entity_name*/e.name AS existing, row.name AS name
