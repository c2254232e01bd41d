// Chunk ids that pass a neo4j-graphrag metadata filter (GuidedRetriever's `filters`, e.g.
// {"position": {"$lte": 1}}). The condition between the markers is written by neo4j-graphrag's own
// filter compiler (neo4j_graphrag.filters.get_metadata_filter, node alias `c`): property names
// escaped, every value a $param_N parameter. The ids join the selection as `... & chunks(ids)`.
// Columns: chunk_id.
:param param_0 => 1;
MATCH (c:/*chunk_label*/`Chunk`)
WHERE
// selection:begin
/*chunk_position*/c.position <= $param_0
// selection:end
RETURN /*chunk_id*/c.id AS chunk_id
ORDER BY chunk_id
