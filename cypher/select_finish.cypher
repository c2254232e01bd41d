// select_finish — turns the selection's chunk list into rows: after this fragment `c` is bound
// to each selected chunk exactly once, which is what the ranking templates (retrieve_*.cypher)
// expect between their `selection:begin` and `selection:end` markers.
// Columns (Browser): id.
:param sel_chunk_ids => ['mq-4a8e99e887d2d891', 'mq-2bee6b4db0651074'];

MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
WITH collect(c) AS s
// @fragment rows
UNWIND s AS c
// @end
RETURN /*chunk_id*/c.id AS id;
