// eval_chunk_graph — the evaluation's reference rows (guidedrag_graph/evaluation/peers.py): every
// chunk with its embedding and the entities it mentions, read once per question set, for the
// HippoRAG-2-style personalized PageRank row (`ppr-reference`) and the peers' raw cosines.
// Columns: id, embedding, entities (entity ids).
MATCH (c:/*chunk_label*/Chunk)
OPTIONAL MATCH (c)/*mentions*/-[:MENTIONS]->(e:/*entity_label*/Entity)
RETURN /*chunk_id*/c.id AS id, /*chunk_embedding*/c.embedding AS embedding,
       collect(DISTINCT /*entity_id*/e.id) AS entities
ORDER BY id;
