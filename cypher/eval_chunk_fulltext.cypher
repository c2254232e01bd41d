// eval_chunk_fulltext — the full-text index on chunk text that neo4j-graphrag's HybridRetriever
// needs (the evaluation's `nggr-hybrid` peer row, guidedrag_graph/evaluation/peers.py); created
// once, if absent (the evaluation writes nothing else into the KB).
CREATE FULLTEXT INDEX guidedrag_chunk_text IF NOT EXISTS
FOR (c:/*chunk_label*/Chunk) ON EACH [/*chunk_text*/c.text];
