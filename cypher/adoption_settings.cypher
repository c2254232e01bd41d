// adoption_settings — what `guidedrag kb adopt` found or created (index names, schema preset or
// mapping file, id mode), read whenever a command connects so an adopted graph needs no variable
// set by hand. The label is named through db.labels(), so a graph never adopted is asked without
// an "unknown label" notification. Columns: record (none when the graph was never adopted).
CALL db.labels() YIELD label
WITH label WHERE label = '__GuidedRAGAdoption'
MATCH (a:$(label))
RETURN properties(a) AS record
LIMIT 1
