// load_relations_property_create — load_relations_property for a database without entity
// relations yet: CREATE, no MERGE lookups. Columns: none.
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to', chunk_id: 'c-example'}];

UNWIND $rows AS row
MATCH (h:Entity {id: row.head})
MATCH (t:Entity {id: row.tail})
CREATE (h)-[r:RELATED_TO {type: row.type, predicate: row.predicate, source_chunk: row.chunk_id}]->(t)
