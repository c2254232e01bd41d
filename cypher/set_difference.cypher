// set_difference — A - B: the chunks of A that are not in B.
// The compiler renames lhs/rhs (operand lists), tl/tr (their cap flags) and s/t to its own.
// Columns (Browser): result, truncated.
:param sel_lhs => ['c1', 'c2'];
:param sel_rhs => ['c2', 'c3'];

WITH $sel_lhs AS lhs, $sel_rhs AS rhs, false AS tl, false AS tr
// @fragment set
WITH *, [x IN lhs WHERE NOT x IN rhs] AS s, tl OR tr AS t
// @end
RETURN s AS result, t AS truncated;
