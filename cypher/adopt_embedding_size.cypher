// adopt_embedding_size — the dimensions of the chunk embeddings already in the graph (the vector
// index `kb adopt` creates must match them). Columns: dimensions.
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_embedding*/c.embedding IS NOT NULL
RETURN size(/*chunk_embedding*/c.embedding) AS dimensions
LIMIT 1
