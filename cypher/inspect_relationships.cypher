// inspect_relationships — relationship types between label sets, over a sample of relationships
// (a KG builder's layout shows in the first few thousand). Columns: from, type, to, n.
:param sample => 100000;

MATCH (a)-[r]->(b)
WITH labels(a) AS from, type(r) AS type, labels(b) AS to
LIMIT $sample
RETURN from, type, to, count(*) AS n
ORDER BY n DESC
