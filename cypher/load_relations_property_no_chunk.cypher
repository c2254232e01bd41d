// load_relations_property_no_chunk — load_relations_property without a source chunk.
// Columns: none.
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to'}];

UNWIND $rows AS row
MATCH (h:/*entity_label*/Entity {/*entity_id*/id: row.head})
MATCH (t:/*entity_label*/Entity {/*entity_id*/id: row.tail})
MERGE (h)-[r:/*generic_relation_type*/RELATED_TO {/*relation_type_property*/type: row.type, /*relation_text_property*/predicate: row.predicate}]->(t)
