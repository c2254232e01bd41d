// Descriptions of the selected entities (those named in the semantics and those the prompt's
// chunks mention), for the augmented prompt. Entities without a description are skipped.
:param chunk_ids => ['c1', 'c2'];
:param entity_keys => ['rome'];
:param limit => 20;
OPTIONAL MATCH (c:/*chunk_label*/`Chunk`)/*mentions*/-[:`MENTIONS`]->(e:/*entity_label*/`Entity`) WHERE /*chunk_id*/c.id IN $chunk_ids
WITH collect(DISTINCT e) AS mentioned
OPTIONAL MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_key*/e.name_key IN $entity_keys
WITH collect(DISTINCT e) AS named, mentioned
UNWIND named + [x IN mentioned WHERE NOT x IN named] AS e
WITH DISTINCT e
WHERE /*entity_description*/e.description IS NOT NULL AND trim(toString(/*entity_description*/e.description)) <> ''
RETURN /*entity_name*/e.name AS name, /*entity_type*/e.type AS type, /*entity_description*/e.description AS description
LIMIT $limit
