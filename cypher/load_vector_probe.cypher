// load_vector_probe — does this server take a VECTOR parameter (Bolt 6, Neo4j 2025.10+)? The
// loader then sends embeddings as packed vectors instead of lists of floats.
// Columns: dims.
:param v => [0.6, 0.8];

RETURN size(toFloatList($v)) AS dims
