// vector_index_filters — the properties a vector index is declared on: the embedding first,
// then its filter properties (`WITH [c.id]`, 2026.06+). The planner ranks a large selection
// inside the index (`SEARCH ... WHERE c.id IN ...`) only when the chunk id is among them;
// otherwise Neo4j fails with "not an additional property for vector search with filters".
// Columns: name, properties.
:param index_name => 'chunk_embedding';

SHOW VECTOR INDEXES YIELD name, properties WHERE name = $index_name
RETURN name, properties;
