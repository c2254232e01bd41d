// select_all — U, every chunk (base RAG). Two fragments: "alone" is the whole selection when the
// expression is just all() (the retrieval stage then ranks with the vector index); "set" collects
// U as a list when all() is combined with other terms, e.g. all() - entity('Rome').
// Columns (Browser): size, truncated, chunk_ids.
:param sel_unused => null;

// @fragment alone
MATCH (c:/*chunk_label*/Chunk)
// @end
RETURN count(c) AS size, false AS truncated, collect(/*chunk_id*/c.id)[..25] AS chunk_ids;

// @fragment set
CALL () {
  MATCH (c:/*chunk_label*/Chunk)
  WITH collect(c) AS s
  RETURN s, false AS t
}
// @end
RETURN size(s) AS size, t AS truncated, [x IN s | /*chunk_id*/x.id][..25] AS chunk_ids;
