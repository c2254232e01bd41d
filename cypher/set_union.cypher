// set_union — A | B: the chunks in either selection, each once. Operands are the lists every
// select_* fragment collects (s), combined without UNWIND so each chunk stays one element.
// The compiler renames lhs/rhs (operand lists), tl/tr (their cap flags) and s/t to its own.
// Columns (Browser): result, truncated.
:param sel_lhs => ['c1', 'c2'];
:param sel_rhs => ['c2', 'c3'];

WITH $sel_lhs AS lhs, $sel_rhs AS rhs, false AS tl, false AS tr
// @fragment set
WITH *, lhs + [x IN rhs WHERE NOT x IN lhs] AS s, tl OR tr AS t
// @end
RETURN s AS result, t AS truncated;
