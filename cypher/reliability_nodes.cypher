// reliability_nodes — every node with its labels and properties, for the reliability suite's
// content checksum: hashed before and after thousands of hostile selections, it must
// not change. Only for test-sized databases (it reads everything).
// Columns: id, labels, props.
:param unused => null;

MATCH (n)
RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props;
