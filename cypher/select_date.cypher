// select_date — date(from, to): chunks whose document date lies in [$sel_from, $sel_to]
// (inclusive ISO dates; the Selector turns years and months into whole ranges and open sides
// into 0001-01-01 / 9999-12-31, so the document date range index serves both ends).
// Columns (Browser): size, truncated, chunk_ids.
:param sel_from => '2002-01-01';
:param sel_to => '2026-12-31';

// @fragment set
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_date*/d.date >= date($sel_from) AND /*document_date*/d.date <= date($sel_to)
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
