// kb_stats_indexes — every index but the token lookups, with its state (`guidedrag kb stats`).
// Columns: name, type, state, populationPercent, labelsOrTypes, properties.
SHOW INDEXES YIELD name, type, state, populationPercent, labelsOrTypes, properties
WHERE type <> 'LOOKUP'
RETURN name, type, state, populationPercent, labelsOrTypes, properties ORDER BY name
