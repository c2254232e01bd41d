// select_chunks — chunks(id, ...): a manual selection; ids that do not exist are ignored.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_ids => ['c-1', 'c-2'];

// @fragment set
CALL () {
  MATCH (c:Chunk) WHERE c.id IN $sel_ids
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | x.id][..25] AS chunk_ids;
