// Descriptions of the selected entities (those named in the semantics and those the prompt's
// chunks mention), for the augmented prompt. Entities without a description are skipped.
:param chunk_ids => ['c1', 'c2'];
:param entity_keys => ['rome'];
:param limit => 20;
OPTIONAL MATCH (c:`Chunk`)-[:`MENTIONS`]->(e:`Entity`) WHERE c.id IN $chunk_ids
WITH collect(DISTINCT e) AS mentioned
OPTIONAL MATCH (e:`Entity`) WHERE e.name_key IN $entity_keys
WITH collect(DISTINCT e) AS named, mentioned
UNWIND named + [x IN mentioned WHERE NOT x IN named] AS e
WITH DISTINCT e
WHERE e.description IS NOT NULL AND trim(toString(e.description)) <> ''
RETURN e.name AS name, e.type AS type, e.description AS description
LIMIT $limit
