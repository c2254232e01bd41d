// bench_selection_vectors — the chunks of a synthetic selection group (benchmarks/scale.py):
// their ids and vectors, for exact NumPy ranking over the same selection. Columns: id, embedding.
:param group => 'sel100';

MATCH (d:Document {source: $group})<-[:PART_OF]-(c:Chunk)
RETURN c.id AS id, c.embedding AS embedding
