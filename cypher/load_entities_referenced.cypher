// load_entities_referenced — entities only named by a chunk or a relation: created once, never
// overwriting what a declaring bundle set. Columns: none.
:param rows => [{id: 'e-example', name: 'Example', name_key: 'example', aliases: [], alias_keys: []}];

UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
ON CREATE SET e.name = row.name, e.name_key = row.name_key, e.aliases = row.aliases,
    e.alias_keys = row.alias_keys
