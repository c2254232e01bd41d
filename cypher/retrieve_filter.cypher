// retrieve_filter — neo4j-graphrag metadata filters (GuidedRetriever's `filters`,
// GuidedRAG.retrieve(filters=...)) compiled into the ranking query as a term
// (guidedrag_graph/retrieval/filters.py): the condition on the chunk `c` between the selection
// markers is an example of what the compiler writes (property keys backtick-quoted, every value a
// $flt_N parameter). Under hard/soft steering the `where` fragment narrows the selection; under
// auto, retrieve_filter_tiers.cypher narrows the tiers and binds the universe U.
// Run as-is, this query says whether any chunk passes (the pipeline abstains before embedding
// the question when none does).
// Columns: id (one chunk that passes, or no row).
:param flt_0 => 1;
MATCH (c:/*chunk_label*/Chunk)
// @fragment where
WITH c WHERE
// @end
// selection:begin
c.`position` <= $flt_0
// selection:end
RETURN /*chunk_id*/c.id AS id
LIMIT 1;
