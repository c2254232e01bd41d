// Is a procedure installed? The planner asks once per driver whether the guidedrag.rank plugin
// (plugin/, docs/plugin.md) is there, and ranks in pure Cypher when it is not.
// Columns: listed (boolean).
:param name => 'guidedrag.rank';
SHOW PROCEDURES YIELD name
WHERE name = $name
RETURN count(*) > 0 AS listed
