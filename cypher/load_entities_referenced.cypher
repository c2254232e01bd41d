// load_entities_referenced — entities only named by a chunk or a relation: created once (with
// the :__GuidedRAGLoaded label), never overwriting what a declaring bundle set. Columns: none.
:param rows => [{id: 'e-example', name: 'Example', name_key: 'example', aliases: [], alias_keys: []}];

UNWIND $rows AS row
MERGE (e:/*entity_label*/Entity {/*entity_id*/id: row.id})
ON CREATE SET e:__GuidedRAGLoaded, /*entity_name*/e.name = row.name, /*entity_key*/e.name_key = row.name_key, /*entity_aliases*/e.aliases = row.aliases,
    /*entity_alias_keys*/e.alias_keys = row.alias_keys
