// load_chunk_embeddings — stored vectors of chunks a resumed load would otherwise re-embed.
// Columns: id, text, embedding.
:param ids => ['c-example'];

MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id IN $ids AND /*chunk_embedding*/c.embedding IS NOT NULL
RETURN /*chunk_id*/c.id AS id, /*chunk_text*/c.text AS text, /*chunk_embedding*/c.embedding AS embedding
