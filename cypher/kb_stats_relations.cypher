// kb_stats_relations — entity relations by type (`guidedrag kb stats`), entity to entity only: a
// predicate such as "part of" may share a structural type's name. "types": relationship types;
// "property": the generic relationship's type property (relation mode "property").
// Columns: type, n.
:param unused => null;

// @fragment types
MATCH (:/*entity_label*/Entity)-[r]->(:/*entity_label*/Entity)
RETURN type(r) AS type, count(*) AS n ORDER BY n DESC, type
// @end
;

// @fragment property
MATCH (:/*entity_label*/Entity)-[r:/*generic_relation_type*/RELATED_TO]->(:/*entity_label*/Entity)
RETURN /*relation_type_property*/r.type AS type, count(*) AS n ORDER BY n DESC, type
// @end
;
