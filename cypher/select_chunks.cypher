// select_chunks — chunks(id, ...): a manual selection; ids that do not exist are ignored.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_ids => ['mq-4a8e99e887d2d891', 'mq-2bee6b4db0651074'];

// @fragment set
CALL () {
  MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id IN $sel_ids
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
