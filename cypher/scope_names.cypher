// scope_names — the names a trusted scope may show (guidedrag_graph/selection/scope_names.py,
// docs/security.md "What a scope hides"): the entities mentioned by in-scope chunks, the relation
// types of the relations a scoped prompt may carry, and the in-scope documents. Read once per KB
// version and scope (the process's warm state), then linking, resolution, suggestions and
// relation-type linking answer from it: a name that exists only outside the scope is unknown.
// A scope's prelude (cypher/scope.cypher `open` ... `close`: it binds `scope_u`, the in-scope
// chunks) goes first; the example below is one. The relation rule (the same as augmentation's
// `scoped` variant): a relation counts when its evidence chunk (the schema's relation chunk
// property) is in scope, or, having none, when both endpoints are mentioned by in-scope chunks.
// Bounded: a scope that mentions more than $max_entities entities returns its count and no
// lists (read nothing more); then each name is checked against the scope per request
// (`scope_names_check`).
// Columns: total, entities (lists [id, name, name_key, alias_keys, mentions, document_subject],
// ordered by name), relation_types, documents.
:param scp_0_ids => ['wiki:Journal of Mathematical Physics'];
:param max_entities => 100000;
:param mention_cap => 1000;
:param structural_types => ['PART_OF', 'MENTIONS', 'NEXT_CHUNK'];
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id IN $scp_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  RETURN collect(DISTINCT c) AS scope_u
}
// @fragment names
CALL (scope_u) {
  UNWIND scope_u AS c
  MATCH (c)/*mentions*/-[:MENTIONS]->(e:/*entity_label*/Entity)
  RETURN count(DISTINCT e) AS total
}
CALL (scope_u, total) {
  UNWIND CASE WHEN total <= $max_entities THEN scope_u ELSE [] END AS c
  MATCH (c)/*mentions*/-[:MENTIONS]->(e:/*entity_label*/Entity)
  WITH DISTINCT e
  CALL (e) {
    MATCH (m:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
    WITH m LIMIT $mention_cap
    RETURN count(m) AS mentions
  }
  WITH e, mentions ORDER BY /*entity_name*/e.name
  RETURN collect(e) AS nodes,
    collect([/*entity_id*/e.id, /*entity_name*/e.name, /*entity_key*/e.name_key, coalesce(/*entity_alias_keys*/e.alias_keys, []),
      mentions, EXISTS { MATCH (d:/*document_label*/Document) WHERE /*document_title*/d.title = /*entity_name*/e.name }]) AS entities
}
CALL (scope_u, nodes) {
  WITH [c IN scope_u | /*chunk_id*/c.id] AS chunk_ids, nodes
  UNWIND nodes AS h
  MATCH (h)-[r]->(t:/*entity_label*/Entity)
  WHERE NOT type(r) IN $structural_types
    AND (/*relation_chunk_property*/r.source_chunk IN chunk_ids OR (/*relation_chunk_property*/r.source_chunk IS NULL AND t IN nodes))
  RETURN collect(DISTINCT coalesce(/*relation_type_property*/r.type, type(r))) AS relation_types
}
CALL (scope_u, total) {
  UNWIND CASE WHEN total <= $max_entities THEN scope_u ELSE [] END AS c
  MATCH (c)/*part_of*/-[:PART_OF]->(d:/*document_label*/Document)
  RETURN collect(DISTINCT /*document_id*/d.id) AS documents
}
RETURN total, entities, relation_types, documents
// @end
