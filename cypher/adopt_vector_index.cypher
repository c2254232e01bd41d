// adopt_vector_index — `guidedrag kb adopt`: the cosine vector index over chunk embeddings that
// base RAG and large selections rank with. Variant filter=ids (2026.06+): declared WITH the
// chunk id, so a large selection filters the index search itself (retrieve_search_in);
// filter=none on servers before 2026.06 (no filter properties) or where ids are elementId().
// @variants filter=ids|none
:param vector_index_config => {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'};
// @variant filter=ids
CYPHER 25
// @end-variant
CREATE VECTOR INDEX /*vector_index*/`chunk_embedding` IF NOT EXISTS
FOR (c:/*chunk_label*/`Chunk`) ON /*chunk_embedding*/c.embedding
// @variant filter=ids
WITH [/*chunk_id*/c.id]
// @end-variant
OPTIONS {indexConfig: $vector_index_config}
