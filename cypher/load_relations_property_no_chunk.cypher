// load_relations_property_no_chunk — load_relations_property without a source chunk.
// Columns: none.
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to'}];

UNWIND $rows AS row
MATCH (h:Entity {id: row.head})
MATCH (t:Entity {id: row.tail})
MERGE (h)-[r:RELATED_TO {type: row.type, predicate: row.predicate}]->(t)
