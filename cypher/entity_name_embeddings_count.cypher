// entity_name_embeddings_count — how many entities `guidedrag kb embed-entities` still has to
// embed (its progress bar's total). Columns: missing.
MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_name_embedding*/e.name_embedding IS NULL AND /*entity_name*/e.name IS NOT NULL
RETURN count(e) AS missing
