// load_bulk_nodes — how many data nodes the database holds (migration records aside): `load
// --bulk` replaces the database, so it refuses unless this is 0. Columns: nodes.
MATCH (n) WHERE NOT n:__GuidedRAGMigration
RETURN count(n) AS nodes
