// load_chunk_ids — which of a batch's chunk ids the database already holds (index seek), so
// the loader CREATEs the new ones and MERGEs only the rest. Columns: id, text, has_embedding.
:param ids => ['c-example'];

MATCH (c:Chunk) WHERE c.id IN $ids
RETURN c.id AS id, c.text AS text, c.embedding IS NOT NULL AS has_embedding
