// inspect_labels — every node label with its node count (count store: no scan). Used by
// `guidedrag kb inspect` and by the check that a schema mapping matches the database.
// Columns: label, nodes.
CALL db.labels() YIELD label
CALL (label) { MATCH (n:$(label)) RETURN count(n) AS nodes }
RETURN label, nodes
ORDER BY nodes DESC, label
