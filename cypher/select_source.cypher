// select_source — source(s): the chunks of every document whose source equals $sel_source.
// Columns (Browser): size, truncated, chunk_ids.
:param sel_source => 'wikipedia';

// @fragment set
CALL () {
  MATCH (d:/*document_label*/Document) WHERE /*document_source*/d.source = $sel_source
  MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d)
  WITH collect(DISTINCT c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
