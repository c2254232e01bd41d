// Entities still lacking a name embedding (read), then the write that stores them in batches.
:param limit => 1000;
MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_name_embedding*/e.name_embedding IS NULL AND /*entity_name*/e.name IS NOT NULL
RETURN /*entity_id*/e.id AS id, /*entity_name*/e.name AS name
LIMIT $limit
