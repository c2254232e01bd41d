// The chunk vector index's declared properties, read by the planner before it chooses the
// `search_in` path: the first property is the embedding, the others are the additional (filter)
// properties a `SEARCH ... WHERE` may test (declared `WITH [c.id]`, Neo4j 2026.06+). An index
// made without them makes a filtered SEARCH fail with "not an additional property".
// Columns: name, labels, properties, options.
:param index_name => 'chunk_embedding';
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options
WHERE name = $index_name
RETURN name, labelsOrTypes AS labels, properties, options
