// load_relations_property — entity relations as one generic type with the type as a property
// (relation_mode "property", e.g. for tools that cannot create types). Columns: none.
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to', chunk_id: 'c-example'}];

UNWIND $rows AS row
MATCH (h:/*entity_label*/Entity {/*entity_id*/id: row.head})
MATCH (t:/*entity_label*/Entity {/*entity_id*/id: row.tail})
MERGE (h)-[r:/*generic_relation_type*/RELATED_TO {/*relation_type_property*/type: row.type, /*relation_text_property*/predicate: row.predicate, /*relation_chunk_property*/source_chunk: row.chunk_id}]->(t)
