// schema_indexes — every index with what it covers: `migrate` uses it to replace its own indexes
// when the schema mapping changed, `kb inspect` / `kb adopt` to report and reuse them.
// Columns: name, type, entity_type, labels, properties, state, owning_constraint.
SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state, owningConstraint
RETURN name, type, entityType AS entity_type, labelsOrTypes AS labels, properties, state,
       owningConstraint AS owning_constraint
ORDER BY name
