// Relational triplets among the selected entities: the entities the prompt's chunks mention,
// plus the entities named in the semantics, and the relations that join two of them.
// In "property" relation mode the type is the generic relationship's `type` property.
:param chunk_ids => ['c1', 'c2'];
:param entity_keys => ['rome'];
:param structural_types => ['PART_OF', 'MENTIONS'];
:param limit => 50;
OPTIONAL MATCH (c:/*chunk_label*/`Chunk`)/*mentions*/-[:`MENTIONS`]->(e:/*entity_label*/`Entity`) WHERE /*chunk_id*/c.id IN $chunk_ids
WITH collect(DISTINCT e) AS mentioned
OPTIONAL MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_key*/e.name_key IN $entity_keys
WITH mentioned, collect(DISTINCT e) AS named
WITH mentioned + named AS entities
UNWIND entities AS h
MATCH (h)-[r]->(t:/*entity_label*/`Entity`)
WHERE t IN entities AND NOT type(r) IN $structural_types
WITH DISTINCT h, r, t
RETURN /*entity_name*/h.name AS head, coalesce(/*relation_type_property*/r.type, type(r)) AS type, /*relation_text_property*/r.predicate AS predicate,
       /*entity_name*/t.name AS tail, /*relation_chunk_property*/r.source_chunk AS source_chunk
ORDER BY head, type, tail
LIMIT $limit
