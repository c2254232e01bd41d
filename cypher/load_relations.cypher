// load_relations — a bundle's entity relations. Variant mode=types: as relationship types (the
// type comes from the row: dynamic types, Neo4j 5.26+; already a safe UPPER_SNAKE name that is
// never one of the lexical graph's types); mode=property: as one generic type with the type as a
// property (relation_mode "property", e.g. for tools that cannot create types). The predicate
// text and the source chunk are kept. Variant write=merge: MERGE; write=no_chunk: MERGE for
// relations without a source chunk (MERGE cannot match a null property); write=create: for a
// database that held no entity relation when the relations stage began (load_relations_present
// said so), CREATE, no MERGE lookups (a null chunk_id leaves source_chunk unset).
// Columns: none.
// @variants mode=types|property write=merge|no_chunk|create
// @variant write=merge|create
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to', chunk_id: 'c-example'}];
// @end-variant
// @variant write=no_chunk
:param rows => [{head: 'e-example', tail: 'e-example-2', type: 'RELATED_TO', predicate: 'related to'}];
// @end-variant

UNWIND $rows AS row
MATCH (h:/*entity_label*/Entity {/*entity_id*/id: row.head})
MATCH (t:/*entity_label*/Entity {/*entity_id*/id: row.tail})
// @variant mode=types
// @variant write=merge
MERGE (h)-[r:$(row.type) {/*relation_text_property*/predicate: row.predicate, /*relation_chunk_property*/source_chunk: row.chunk_id}]->(t)
// @end-variant
// @variant write=no_chunk
MERGE (h)-[r:$(row.type) {/*relation_text_property*/predicate: row.predicate}]->(t)
// @end-variant
// @variant write=create
CREATE (h)-[r:$(row.type) {/*relation_text_property*/predicate: row.predicate, /*relation_chunk_property*/source_chunk: row.chunk_id}]->(t)
// @end-variant
// @end-variant
// @variant mode=property
// @variant write=merge
MERGE (h)-[r:/*generic_relation_type*/RELATED_TO {/*relation_type_property*/type: row.type, /*relation_text_property*/predicate: row.predicate, /*relation_chunk_property*/source_chunk: row.chunk_id}]->(t)
// @end-variant
// @variant write=no_chunk
MERGE (h)-[r:/*generic_relation_type*/RELATED_TO {/*relation_type_property*/type: row.type, /*relation_text_property*/predicate: row.predicate}]->(t)
// @end-variant
// @variant write=create
CREATE (h)-[r:/*generic_relation_type*/RELATED_TO {/*relation_type_property*/type: row.type, /*relation_text_property*/predicate: row.predicate, /*relation_chunk_property*/source_chunk: row.chunk_id}]->(t)
// @end-variant
// @end-variant
// A relation between two nodes the loader did not create (a user's entities a bundle merged
// onto) carries the mark as a property: `kb wipe` deletes it too. Between the loader's own
// entities (every bulk or fresh load) nothing is written: the row is unchanged.
// @variant write=merge|no_chunk
ON CREATE SET r.__GuidedRAGLoaded = CASE WHEN h:__GuidedRAGLoaded OR t:__GuidedRAGLoaded THEN null ELSE true END
// @end-variant
// @variant write=create
SET r.__GuidedRAGLoaded = CASE WHEN h:__GuidedRAGLoaded OR t:__GuidedRAGLoaded THEN null ELSE true END
// @end-variant
