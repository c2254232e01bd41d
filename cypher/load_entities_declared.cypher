// load_entities_declared — entities of entities.jsonl: MERGE on id, every property set.
// Columns: none.
:param rows => [{id: 'e-example', name: 'Example', name_key: 'example', aliases: [], alias_keys: [], type: 'Thing', description: null}];

UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
SET e.name = row.name, e.name_key = row.name_key, e.aliases = row.aliases,
    e.alias_keys = row.alias_keys, e.type = row.type, e.description = row.description
