// resolve_document — which documents a name means: tier 1 by id, tier 2 by exact title.
// Columns: tier, id.
:param sel_name => 'Journal of Mathematical Physics';

// @fragment query
MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id = $sel_name RETURN 1 AS tier, /*document_id*/d.id AS id
UNION
MATCH (d:/*document_label*/Document) WHERE /*document_title*/d.title = $sel_name RETURN 2 AS tier, /*document_id*/d.id AS id
// @end
;
