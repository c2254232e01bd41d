// load_relations_no_chunk — like load_relations, for relations without a source chunk
// (MERGE cannot match a null property). Columns: none.
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to'}];

UNWIND $rows AS row
MATCH (h:/*entity_label*/Entity {/*entity_id*/id: row.head})
MATCH (t:/*entity_label*/Entity {/*entity_id*/id: row.tail})
MERGE (h)-[r:$(row.type) {/*relation_text_property*/predicate: row.predicate}]->(t)
