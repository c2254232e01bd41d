// select_sizes — the size of every sub-expression in one round trip (what `guidedrag select`
// prints as a tree, like EXPLAIN ANALYZE): the compiler returns size(s_i) and the truncation flag
// t_i of each node instead of unwinding the result.
// Columns: sizes, truncated (one element per node).
:param sel_chunk_ids => ['mq-4a8e99e887d2d891', 'mq-2bee6b4db0651074'];

MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
WITH collect(c) AS s, false AS t
// @fragment item
RETURN /*sizes*/[size(s)] AS sizes, /*flags*/[t] AS truncated
// @end
;
