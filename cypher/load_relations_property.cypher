// load_relations_property — entity relations as one generic type with the type as a property
// (relation_mode "property", e.g. for tools that cannot create types). Columns: none.
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to', chunk_id: 'c-example'}];

UNWIND $rows AS row
MATCH (h:Entity {id: row.head})
MATCH (t:Entity {id: row.tail})
MERGE (h)-[r:RELATED_TO {type: row.type, predicate: row.predicate, source_chunk: row.chunk_id}]->(t)
