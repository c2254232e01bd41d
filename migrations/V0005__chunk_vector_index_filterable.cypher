// requires: neo4j >= 2026.06
// Re-declares the chunk vector index WITH the chunk id, so SEARCH can filter inside the index
// (`WHERE c.id IN $ids`, 2026.06+) instead of post-filtering the global top k.
DROP INDEX {{index:vector}} IF EXISTS;
CREATE VECTOR INDEX {{index:vector}} IF NOT EXISTS
FOR (c:{{chunk_label}}) ON c.{{chunk_embedding}}
WITH [c.{{chunk_id}}]
OPTIONS {indexConfig: $vector_index_config};
