// The chunk vector index (cosine). Dimensions and quantization come from settings and the server
// version through $vector_index_config; 2026.06+ servers get quantization 'none' for exact ranks.
:param vector_index_config => {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'};
CREATE VECTOR INDEX /*vector_index*/chunk_embedding IF NOT EXISTS
FOR (c:/*chunk_label*/Chunk) ON /*chunk_embedding*/c.embedding
OPTIONS {indexConfig: $vector_index_config};
