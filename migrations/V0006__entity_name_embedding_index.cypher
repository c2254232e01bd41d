// Vector index over entity-name embeddings (cosine, dimensions from settings), for the
// embedding and hybrid entity taggers. `guidedrag kb embed-entities` fills `name_embedding`.
:param vector_index_config => {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'};
CREATE VECTOR INDEX /*entity_vector_index*/entity_name_embedding IF NOT EXISTS
FOR (e:/*entity_label*/Entity) ON e.name_embedding
OPTIONS {indexConfig: $vector_index_config};
