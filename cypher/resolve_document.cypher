// resolve_document — which documents a name means: tier 1 by id, tier 2 by exact title.
// Columns: tier, id.
:param sel_name => 'Journal of Mathematical Physics';

// @fragment query
MATCH (d:Document) WHERE d.id = $sel_name RETURN 1 AS tier, d.id AS id
UNION
MATCH (d:Document) WHERE d.title = $sel_name RETURN 2 AS tier, d.id AS id
// @end
;
