// What the augmented prompt adds to the chunks, in one READ query: the selected entities (those
// the prompt's chunks mention, plus those named in the semantics), the relational triplets that
// join two of them, and their descriptions. One round trip instead of one per part.
// In "property" relation mode a triplet's type is the generic relationship's `type` property.
// Entities without a description are left out of `entities`.
// Columns: triplets, entities (triplets: maps of head, type, predicate, tail, source_chunk, at
// most $triplet_limit, ordered by head, type, tail; entities: maps of name, type, description,
// at most $entity_limit).
// Variant scope=scoped (a trusted scope, guidedrag_graph/selection/scope_names.py): the scope's
// prelude (cypher/scope.cypher, binding `scope_u`, the in-scope chunks; the example below is the
// whole KB) goes first, and nothing outside it reaches the prompt: only in-scope chunks' entities,
// named entities an in-scope chunk mentions, and a triplet only when its evidence chunk (the
// relation chunk property) is in scope or, having none, when both its endpoints are such entities.
// @variants scope=none|scoped
:param chunk_ids => ['c1', 'c2'];
:param entity_keys => ['rome'];
:param structural_types => ['PART_OF', 'MENTIONS'];
:param triplet_limit => 50;
:param entity_limit => 20;
// @variant scope=scoped
CALL () {
  MATCH (c:/*chunk_label*/`Chunk`)
  RETURN collect(c) AS scope_u
}
// @end-variant
// @fragment query
// @variant scope=none
OPTIONAL MATCH (c:/*chunk_label*/`Chunk`)/*mentions*/-[:`MENTIONS`]->(e:/*entity_label*/`Entity`) WHERE /*chunk_id*/c.id IN $chunk_ids
WITH collect(DISTINCT e) AS mentioned
OPTIONAL MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_key*/e.name_key IN $entity_keys
WITH mentioned, collect(DISTINCT e) AS named
// @end-variant
// @variant scope=scoped
OPTIONAL MATCH (c:/*chunk_label*/`Chunk`)/*mentions*/-[:`MENTIONS`]->(e:/*entity_label*/`Entity`)
WHERE /*chunk_id*/c.id IN $chunk_ids AND c IN scope_u
WITH scope_u, collect(DISTINCT e) AS mentioned
OPTIONAL MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_key*/e.name_key IN $entity_keys
  AND EXISTS { MATCH (m:/*chunk_label*/`Chunk`)/*mentions*/-[:`MENTIONS`]->(e) WHERE m IN scope_u }
WITH mentioned, collect(DISTINCT e) AS named, [x IN scope_u | /*chunk_id*/x.id] AS scope_ids
// @end-variant
// @variant scope=none
CALL (mentioned, named) {
// @end-variant
// @variant scope=scoped
CALL (mentioned, named, scope_ids) {
// @end-variant
  UNWIND mentioned + named AS h
  MATCH (h)-[r]->(t:/*entity_label*/`Entity`)
  WHERE (t IN mentioned OR t IN named) AND NOT type(r) IN $structural_types
  // @variant scope=scoped
    AND (/*relation_chunk_property*/r.source_chunk IS NULL OR /*relation_chunk_property*/r.source_chunk IN scope_ids)
  // @end-variant
  WITH DISTINCT h, r, t
  WITH /*entity_name*/h.name AS head, coalesce(/*relation_type_property*/r.type, type(r)) AS type,
       /*relation_text_property*/r.predicate AS predicate, /*entity_name*/t.name AS tail,
       /*relation_chunk_property*/r.source_chunk AS source_chunk
  ORDER BY head, type, tail
  LIMIT $triplet_limit
  RETURN collect({head: head, type: type, predicate: predicate, tail: tail,
                  source_chunk: source_chunk}) AS triplets
}
CALL (mentioned, named) {
  UNWIND named + [x IN mentioned WHERE NOT x IN named] AS e
  WITH DISTINCT e
  WHERE /*entity_description*/e.description IS NOT NULL AND trim(toString(/*entity_description*/e.description)) <> ''
  WITH e LIMIT $entity_limit
  RETURN collect({name: /*entity_name*/e.name, type: /*entity_type*/e.type,
                  description: /*entity_description*/e.description}) AS entities
}
RETURN triplets, entities
// @end
