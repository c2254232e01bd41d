// adoption_record — what `guidedrag kb adopt` created (index names, whether it wrote name keys),
// so `--drop` removes exactly that and nothing of the user's. Columns: record.
MATCH (a:__GuidedRAGAdoption)
RETURN properties(a) AS record
