// requires: neo4j >= 2026.06
// Re-declares the chunk vector index WITH the chunk id, so SEARCH can filter inside the index
// (`WHERE c.id IN $ids`, 2026.06+) instead of post-filtering the global top k.
:param vector_index_config => {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'};
DROP INDEX /*vector_index*/chunk_embedding IF EXISTS;
CREATE VECTOR INDEX /*vector_index*/chunk_embedding IF NOT EXISTS
FOR (c:/*chunk_label*/Chunk) ON /*chunk_embedding*/c.embedding
WITH [/*chunk_id*/c.id]
OPTIONS {indexConfig: $vector_index_config};
