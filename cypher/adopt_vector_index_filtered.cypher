// adopt_vector_index_filtered — `guidedrag kb adopt` on 2026.06+: the chunk vector index declared
// WITH the chunk id, so a large selection filters the index search itself (retrieve_search_in).
:param vector_index_config => {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'};
CYPHER 25
CREATE VECTOR INDEX /*vector_index*/`chunk_embedding` IF NOT EXISTS
FOR (c:/*chunk_label*/`Chunk`) ON /*chunk_embedding*/c.embedding
WITH [/*chunk_id*/c.id]
OPTIONS {indexConfig: $vector_index_config}
