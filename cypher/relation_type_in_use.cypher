// relation_type_in_use — whether any relationship of a (validated, escaped) type exists, from
// the count store: db.relationshipTypes() also lists types whose relationships were all deleted.
// The resolver fills the /*relation*/ slot with one candidate type per check.
// Columns: in_use.
:param sel_unused => null;

// @fragment query
RETURN COUNT { ()/*relation*/-[:IS_CURRENCY_OF]->() } > 0 AS in_use
// @end
;
