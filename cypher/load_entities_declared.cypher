// load_entities_declared — entities of entities.jsonl: MERGE on id, every property set; one it
// creates gets the :__GuidedRAGLoaded label (`kb wipe` deletes only those).
// Columns: none.
:param rows => [{id: 'e-example', name: 'Example', name_key: 'example', aliases: [], alias_keys: [], type: 'Thing', description: null}];

UNWIND $rows AS row
MERGE (e:/*entity_label*/Entity {/*entity_id*/id: row.id})
ON CREATE SET e:__GuidedRAGLoaded
SET /*entity_name*/e.name = row.name, /*entity_key*/e.name_key = row.name_key, /*entity_aliases*/e.aliases = row.aliases,
    /*entity_alias_keys*/e.alias_keys = row.alias_keys, /*entity_type*/e.type = row.type, /*entity_description*/e.description = row.description
