// memory_graph_load — write the reference evaluator's in-memory graph (testing/memory_graph.py
// load_graph) with a schema mapping's names, for the differential and conformance tests:
// documents, chunks with their part-of, entities, mentions, then relations one type at a time
// ("types": the /*relation*/ slot takes the type; "property": the generic type with its type
// property), and the chunks' vectors when a test ranks them.
// Columns: none.
:param docs => [{id: 'd-example', title: 'Example', source: 'manual', date: null}];
:param chunks => [{id: 'c-example', doc: 'd-example'}];
:param entities => [{id: 'e-example', name: 'Example', key: 'example', aliases: [], alias_keys: [], type: 'Thing'}];
:param rows => [{c: 'c-example', e: 'e-example', h: 'e-example', t: 'e-example', type: 'IS_CURRENCY_OF', id: 'c-example', embedding: [0.6, 0.8]}];

// @fragment documents
UNWIND $docs AS d CREATE (n:/*document_label*/Document)
SET /*document_id*/n.id = d.id, /*document_title*/n.title = d.title,
    /*document_source*/n.source = d.source, /*document_date*/n.date = d.date
// @end
;

// @fragment chunks
UNWIND $chunks AS row MATCH (d:/*document_label*/Document {/*document_id*/id: row.doc})
CREATE (c:/*chunk_label*/Chunk) SET /*chunk_id*/c.id = row.id, /*chunk_text*/c.text = row.id
CREATE (c)/*part_of*/-[:PART_OF]->(d)
// @end
;

// @fragment entities
UNWIND $entities AS row CREATE (e:/*entity_label*/Entity)
SET /*entity_id*/e.id = row.id, /*entity_name*/e.name = row.name, /*entity_key*/e.name_key = row.key,
    /*entity_aliases*/e.aliases = row.aliases, /*entity_alias_keys*/e.alias_keys = row.alias_keys,
    /*entity_type*/e.type = row.type
// @end
;

// @fragment mentions
UNWIND $rows AS row
MATCH (c:/*chunk_label*/Chunk {/*chunk_id*/id: row.c})
MATCH (e:/*entity_label*/Entity {/*entity_id*/id: row.e})
CREATE (c)/*mentions*/-[:MENTIONS]->(e)
// @end
;

// @fragment relations
UNWIND $rows AS row
MATCH (h:/*entity_label*/Entity {/*entity_id*/id: row.h})
MATCH (t:/*entity_label*/Entity {/*entity_id*/id: row.t})
CREATE (h)/*relation*/-[r:IS_CURRENCY_OF]->(t) SET r.predicate = row.type
// @end
;

// @fragment relations_property
UNWIND $rows AS row
MATCH (h:/*entity_label*/Entity {/*entity_id*/id: row.h})
MATCH (t:/*entity_label*/Entity {/*entity_id*/id: row.t})
CREATE (h)-[r:/*generic_relation_type*/RELATED_TO]->(t) SET /*relation_type_property*/r.type = row.type
// @end
;

// @fragment embeddings
UNWIND $rows AS row
MATCH (c:/*chunk_label*/Chunk {/*chunk_id*/id: row.id})
SET /*chunk_embedding*/c.embedding = row.embedding
// @end
;
