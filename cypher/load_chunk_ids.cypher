// load_chunk_ids — which of a batch's chunk ids the database already holds (index seek), so
// the loader CREATEs the new ones and MERGEs only the rest. Columns: id, text, has_embedding.
:param ids => ['c-example'];

MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_id*/c.id IN $ids
RETURN /*chunk_id*/c.id AS id, /*chunk_text*/c.text AS text, /*chunk_embedding*/c.embedding IS NOT NULL AS has_embedding
