// select_document — document(d): the chunks of the given documents. The Selector resolves d to
// document ids (by id, then by exact title) before this runs.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_ids => ['wiki:Journal of Mathematical Physics'];

// @fragment set
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_id*/d.id IN $sel_ids
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
