// schema_constraints — every constraint with what it covers (see schema_indexes).
// Columns: name, type, entity_type, labels, properties.
SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties
RETURN name, type, entityType AS entity_type, labelsOrTypes AS labels, properties
ORDER BY name
