// relation_types — the relation types a hop may follow, for validating user-given types.
// "types": the database's relationship types (the Selector drops the lexical-graph types);
// "property": the distinct values of the type property on the generic relation.
// Columns: relationship_type.
:param sel_unused => null;

// @fragment types
CALL db.relationshipTypes() YIELD relationshipType
RETURN relationshipType AS relationship_type
// @end
;

// @fragment property
MATCH (:/*entity_label*/Entity)-[r:/*generic_relation_type*/RELATED_TO]->(:/*entity_label*/Entity)
RETURN DISTINCT /*relation_type_property*/r.type AS relationship_type
// @end
;
