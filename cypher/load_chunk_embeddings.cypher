// load_chunk_embeddings — stored vectors of chunks a resumed load would otherwise re-embed.
// Columns: id, text, embedding.
:param ids => ['c-example'];

MATCH (c:Chunk) WHERE c.id IN $ids AND c.embedding IS NOT NULL
RETURN c.id AS id, c.text AS text, c.embedding AS embedding
