// eval_entity_edges — the relation edges between entities (any relationship from an entity to an
// entity), for the evaluation's personalized PageRank reference row
// (guidedrag_graph/evaluation/peers.py). Columns: head, tail (entity ids).
MATCH (a:/*entity_label*/Entity)-[]->(b:/*entity_label*/Entity)
RETURN /*entity_id*/a.id AS head, /*entity_id*/b.id AS tail;
