// adopt_vector_index — `guidedrag kb adopt` on servers before 2026.06 (no filter properties):
// the cosine vector index over chunk embeddings that base RAG and large selections rank with.
:param vector_index_config => {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'};
CREATE VECTOR INDEX /*vector_index*/`chunk_embedding` IF NOT EXISTS
FOR (c:/*chunk_label*/`Chunk`) ON /*chunk_embedding*/c.embedding
OPTIONS {indexConfig: $vector_index_config}
