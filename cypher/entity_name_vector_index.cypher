// entity_name_vector_index — `guidedrag kb embed-entities` on a graph migrations did not set up
// (an adopted one): the cosine vector index over entity-name embeddings that the embedding and
// hybrid taggers search (migration V0006 makes the same index on a KB guidedrag loaded).
:param vector_index_config => {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'};
CREATE VECTOR INDEX /*entity_vector_index*/`entity_name_embedding` IF NOT EXISTS
FOR (e:/*entity_label*/`Entity`) ON /*entity_name_embedding*/e.name_embedding
OPTIONS {indexConfig: $vector_index_config}
