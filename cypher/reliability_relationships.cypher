// reliability_relationships — every relationship with its ends and properties, for the
// reliability suite's content checksum (see reliability_nodes).
// Columns: id, type, start, end, props.
:param unused => null;

MATCH (a)-[r]->(b)
RETURN elementId(r) AS id, type(r) AS type, elementId(a) AS start, elementId(b) AS end,
       properties(r) AS props;
