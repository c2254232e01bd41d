// inspect_relationship_types — the relationship type names the database knows (token store: no
// scan), for the check that a schema mapping's lexical-graph types exist. Columns: type.
CALL db.relationshipTypes() YIELD relationshipType
RETURN relationshipType AS type
