// bench_selection_vectors — the chunks of a synthetic selection group (benchmarks/scale.py):
// their ids and vectors, for exact NumPy ranking over the same selection. Columns: id, embedding.
:param group => 'sel100';

MATCH (d:/*document_label*/Document {source: $group})<-[:PART_OF]-(c:/*chunk_label*/Chunk)
RETURN /*chunk_id*/c.id AS id, /*chunk_embedding*/c.embedding AS embedding
