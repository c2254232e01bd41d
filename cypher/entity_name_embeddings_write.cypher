// Store entity-name embeddings (one batch): rows of {id, embedding}.
:param rows => [{id: 'ada lovelace', embedding: [x IN range(1, 384) | 0.05]}];
UNWIND $rows AS row
MATCH (e:`Entity`) WHERE e.id = row.id
SET e.name_embedding = row.embedding
