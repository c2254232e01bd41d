// Is a procedure (or, variant kind=function, a function) installed? The planner asks once per
// driver whether the guidedrag.rank plugin (plugin/, docs/plugin.md) is there, and ranks in pure
// Cypher when it is not; auto's tiers ask for the plugin's walk functions the same way.
// Columns: listed (boolean).
// @variants kind=procedure|function
:param name => 'guidedrag.rank';
// @variant kind=procedure
SHOW PROCEDURES YIELD name
// @end-variant
// @variant kind=function
SHOW FUNCTIONS YIELD name
// @end-variant
WHERE name = $name
RETURN count(*) > 0 AS listed
