// bench_vector_index_drop — benchmarks/scale.py re-declares the chunk vector index with the
// group property (for neo4j-graphrag filters). Columns: none.
DROP INDEX chunk_embedding IF EXISTS
