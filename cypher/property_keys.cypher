// Every property key in use in the database: a filter or mapping that names any other key is
// rejected before it reaches a query (names are never spliced into Cypher unchecked).
// Columns: keys.
CALL db.propertyKeys() YIELD propertyKey
RETURN collect(propertyKey) AS keys
