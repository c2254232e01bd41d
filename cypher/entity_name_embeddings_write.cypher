// Store entity-name embeddings (one batch): rows of {id, embedding}.
:param rows => [{id: 'ada lovelace', embedding: [x IN range(1, 384) | 0.05]}];
UNWIND $rows AS row
MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_id*/e.id = row.id
SET /*entity_name_embedding*/e.name_embedding = row.embedding
