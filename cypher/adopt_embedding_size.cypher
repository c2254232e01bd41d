// adopt_embedding_size — the dimensions of the chunk embeddings already in the graph (the vector
// index `kb adopt` creates must match them). Columns: dimensions.
MATCH (c:`Chunk`) WHERE c.embedding IS NOT NULL
RETURN size(c.embedding) AS dimensions
LIMIT 1
