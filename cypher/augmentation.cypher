// What the augmented prompt adds to the chunks, in one READ query: the selected entities (those
// the prompt's chunks mention, plus those named in the semantics), the relational triplets that
// join two of them, and their descriptions. One round trip instead of one per part.
// In "property" relation mode a triplet's type is the generic relationship's `type` property.
// Entities without a description are left out of `entities`.
// Columns: triplets, entities (triplets: maps of head, type, predicate, tail, source_chunk, at
// most $triplet_limit, ordered by head, type, tail; entities: maps of name, type, description,
// at most $entity_limit).
:param chunk_ids => ['c1', 'c2'];
:param entity_keys => ['rome'];
:param structural_types => ['PART_OF', 'MENTIONS'];
:param triplet_limit => 50;
:param entity_limit => 20;
OPTIONAL MATCH (c:/*chunk_label*/`Chunk`)/*mentions*/-[:`MENTIONS`]->(e:/*entity_label*/`Entity`) WHERE /*chunk_id*/c.id IN $chunk_ids
WITH collect(DISTINCT e) AS mentioned
OPTIONAL MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_key*/e.name_key IN $entity_keys
WITH mentioned, collect(DISTINCT e) AS named
CALL (mentioned, named) {
  UNWIND mentioned + named AS h
  MATCH (h)-[r]->(t:/*entity_label*/`Entity`)
  WHERE (t IN mentioned OR t IN named) AND NOT type(r) IN $structural_types
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
