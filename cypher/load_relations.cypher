// load_relations — entity relations as relationship types (relation_mode "types"): the type
// comes from the row (dynamic types, Neo4j 5.26+), already a safe UPPER_SNAKE name that is
// never one of the lexical graph's types; the predicate text and source chunk are kept.
// Columns: none.
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to', chunk_id: 'c-example'}];

UNWIND $rows AS row
MATCH (h:/*entity_label*/Entity {/*entity_id*/id: row.head})
MATCH (t:/*entity_label*/Entity {/*entity_id*/id: row.tail})
MERGE (h)-[r:$(row.type) {/*relation_text_property*/predicate: row.predicate, /*relation_chunk_property*/source_chunk: row.chunk_id}]->(t)
