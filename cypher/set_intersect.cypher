// set_intersect — A & B: the chunks in both selections. The iterated side is the smaller list,
// decided at run time, so the most selective operand drives and the other only filters.
// The compiler renames lhs/rhs (operand lists), tl/tr (their cap flags) and s/t to its own.
// Columns (Browser): result, truncated.
:param sel_lhs => ['c1', 'c2'];
:param sel_rhs => ['c2', 'c3'];

WITH $sel_lhs AS lhs, $sel_rhs AS rhs, false AS tl, false AS tr
// @fragment set
WITH *, CASE WHEN size(lhs) <= size(rhs) THEN [x IN lhs WHERE x IN rhs]
             ELSE [x IN rhs WHERE x IN lhs] END AS s, tl OR tr AS t
// @end
RETURN s AS result, t AS truncated;
