// Entities still lacking a name embedding (read), then the write that stores them in batches.
:param limit => 1000;
MATCH (e:`Entity`) WHERE e.name_embedding IS NULL AND e.name IS NOT NULL
RETURN e.id AS id, e.name AS name
LIMIT $limit
