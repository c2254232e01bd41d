// bench_vector_index_with_group — the chunk vector index with id AND group declared as filter
// properties, so SEARCH ... WHERE c.group = ... filters inside the index. Columns: none.
CYPHER 25
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS
FOR (c:/*chunk_label*/Chunk) ON /*chunk_embedding*/c.embedding
WITH [/*chunk_id*/c.id, c.group]
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}
