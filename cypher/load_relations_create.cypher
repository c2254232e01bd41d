// load_relations_create — load_relations for a database that held no entity relation when the
// relations stage began (load_relations_present said so): CREATE, no MERGE lookups. A null
// chunk_id leaves source_chunk unset. Columns: none.
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to', chunk_id: 'c-example'}];

UNWIND $rows AS row
MATCH (h:/*entity_label*/Entity {/*entity_id*/id: row.head})
MATCH (t:/*entity_label*/Entity {/*entity_id*/id: row.tail})
CREATE (h)-[r:$(row.type) {/*relation_text_property*/predicate: row.predicate, /*relation_chunk_property*/source_chunk: row.chunk_id}]->(t)
