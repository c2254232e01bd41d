// scope — a trusted scope (guidedrag_graph/selection/scope.py, docs/security.md "Scopes"): the
// chunks a deployment or a user may read. `open` ... `close` wraps the scope's compiled selection
// (its own subqueries, parameters `scp_*`) so that ONE variable leaves it: `scope_u`, the list of
// in-scope chunks, bound first in a query. Every selection, tier, universe and filter of the
// query is then intersected with it (the fragments below; `c IN scope_u` is a hash lookup once
// the list is built). Run as-is: the scope's size and the KB's chunk count, what
// `Selector.scope` keeps per KB version (empty; or the whole KB, then rankings run unscoped).
// Columns: scope_size, chunks.
:param scp_0_ids => ['wiki:Journal of Mathematical Physics'];
// @fragment open
CALL () {
// @end
  CALL () {
    MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id IN $scp_0_ids
    MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
    WITH collect(DISTINCT c) AS s
    RETURN s, false AS t
  }
// @fragment close
  RETURN s AS scope_u
}
// @end
// @fragment size
RETURN size(scope_u) AS scope_size, COUNT { MATCH (c:/*chunk_label*/Chunk) } AS chunks
// @end
;
