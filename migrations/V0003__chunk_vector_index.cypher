// The chunk vector index (cosine). Dimensions and quantization come from settings and the server
// version through $vector_index_config; 2026.06+ servers get quantization 'none' for exact ranks.
CREATE VECTOR INDEX {{index:vector}} IF NOT EXISTS
FOR (c:{{chunk_label}}) ON c.{{chunk_embedding}}
OPTIONS {indexConfig: $vector_index_config};
