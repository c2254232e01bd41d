// conformance_snapshot — a graph read back as plain rows, through the schema mapping's names,
// for the retrieval conformance suite (guidedrag_graph/testing/retrieval_conformance.py): the
// reference evaluator and numpy rank over this snapshot, the library ranks in Neo4j, and the two
// must agree on every layout (our loader's, neo4j-graphrag's, LangChain's, LlamaIndex's).
// Read-only, one fragment per part. Columns: chunks: id, embedding; entities: id, name;
// mentions: chunk, entity; relations and relations_property: head, type, tail.

// @fragment chunks
MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_embedding*/c.embedding IS NOT NULL
RETURN /*chunk_id*/c.id AS id, /*chunk_embedding*/c.embedding AS embedding
// @end
;

// @fragment entities
MATCH (e:/*entity_label*/Entity)
RETURN /*entity_id*/e.id AS id, /*entity_name*/e.name AS name
// @end
;

// @fragment mentions
MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e:/*entity_label*/Entity)
RETURN DISTINCT /*chunk_id*/c.id AS chunk, /*entity_id*/e.id AS entity
// @end
;

// @fragment relations
MATCH (h:/*entity_label*/Entity)-[r]->(t:/*entity_label*/Entity)
RETURN /*entity_id*/h.id AS head, type(r) AS type, /*entity_id*/t.id AS tail
// @end
;

// @fragment relations_property
MATCH (h:/*entity_label*/Entity)-[r:/*generic_relation_type*/RELATED_TO]->(t:/*entity_label*/Entity)
RETURN /*entity_id*/h.id AS head, /*relation_type_property*/r.type AS type, /*entity_id*/t.id AS tail
// @end
;
