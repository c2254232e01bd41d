// How many chunks a selection holds: the planner's input and the "search space" of the paper.
// Runs in Neo4j Browser as-is; replace the example selection with `guidedrag cypher "<expr>"`.
:param sel_chunk_ids => ['c1', 'c2', 'c3'];
// selection:begin
MATCH (c:/*chunk_label*/`Chunk`) WHERE /*chunk_id*/c.id IN $sel_chunk_ids
// selection:end
RETURN count(c) AS selection_size
