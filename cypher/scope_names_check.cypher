// scope_names_check — which of a request's names a trusted scope may show, asked per request
// when the scope mentions too many entities to hold its names in-process (cypher/scope_names,
// guidedrag_graph/selection/scope_names.py). The scope's prelude (binding `scope_u`) goes first,
// as in scope_names; each fragment keeps the given values that meet the scope's rule: entity ids
// ($ids) and entity names ($names) mentioned by an in-scope chunk, relation types ($types) with
// one relation whose evidence chunk is in scope (or, having none, whose endpoints are both
// mentioned in scope), document ids ($documents) with an in-scope chunk.
// Columns: kept (the values kept, in the order given).
:param scp_0_ids => ['wiki:Journal of Mathematical Physics'];
:param ids => ['Q1', 'Q2'];
:param names => ['Euro', 'Yen'];
:param types => ['IS_CURRENCY_OF'];
:param documents => ['wiki:Journal of Mathematical Physics'];
:param structural_types => ['PART_OF', 'MENTIONS', 'NEXT_CHUNK'];
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id IN $scp_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  RETURN collect(DISTINCT c) AS scope_u
}
// @fragment ids
UNWIND $ids AS id
CALL (id, scope_u) {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id = id
  RETURN EXISTS { MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e) WHERE c IN scope_u } AS hit
  ORDER BY hit DESC LIMIT 1
}
WITH id, hit WHERE hit
RETURN collect(id) AS kept
// @end
;
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id IN $scp_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  RETURN collect(DISTINCT c) AS scope_u
}
// @fragment names
UNWIND $names AS name
CALL (name, scope_u) {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_name*/e.name = name
  RETURN EXISTS { MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e) WHERE c IN scope_u } AS hit
  ORDER BY hit DESC LIMIT 1
}
WITH name, hit WHERE hit
RETURN collect(name) AS kept
// @end
;
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id IN $scp_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  RETURN collect(DISTINCT c) AS scope_u
}
// @fragment types
WITH scope_u, [c IN scope_u | /*chunk_id*/c.id] AS chunk_ids
UNWIND $types AS t
WITH t, scope_u, chunk_ids WHERE EXISTS {
  UNWIND scope_u AS c
  MATCH (c)/*mentions*/-[:MENTIONS]->(h:/*entity_label*/Entity)-[r]->(x:/*entity_label*/Entity)
  WHERE coalesce(/*relation_type_property*/r.type, type(r)) = t AND NOT type(r) IN $structural_types
    AND (/*relation_chunk_property*/r.source_chunk IN chunk_ids
      OR (/*relation_chunk_property*/r.source_chunk IS NULL
        AND EXISTS { MATCH (m:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(x) WHERE m IN scope_u }))
}
RETURN collect(t) AS kept
// @end
;
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id IN $scp_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  RETURN collect(DISTINCT c) AS scope_u
}
// @fragment documents
UNWIND $documents AS id
CALL (id, scope_u) {
  MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id = id
  RETURN EXISTS { MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d) WHERE c IN scope_u } AS hit
  ORDER BY hit DESC LIMIT 1
}
WITH id, hit WHERE hit
RETURN collect(id) AS kept
// @end
;
