// Vector index over entity-name embeddings (cosine, dimensions from settings), for the
// embedding and hybrid entity taggers. `guidedrag kb embed-entities` fills `name_embedding`.
CREATE VECTOR INDEX {{index:entity_vector}} IF NOT EXISTS
FOR (e:{{entity_label}}) ON e.name_embedding
OPTIONS {indexConfig: $vector_index_config};
