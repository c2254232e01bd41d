// set_op — the set algebra on two selections, one variant per operator: op=union is A | B (the
// chunks in either selection, each once); op=intersect A & B (in both: the iterated side is the
// smaller list, decided at run time, so the most selective operand drives and the other only
// filters); op=difference A - B (those of A not in B); op=symdiff A ^ B (in exactly one).
// Operands are the lists every select_* fragment collects (s), combined without UNWIND so each
// chunk stays one element. The compiler renames lhs/rhs (operand lists), tl/tr (their cap flags)
// and s/t to its own.
// Columns (Browser): result, truncated.
// @variants op=union|intersect|difference|symdiff
:param sel_lhs => ['c1', 'c2'];
:param sel_rhs => ['c2', 'c3'];

WITH $sel_lhs AS lhs, $sel_rhs AS rhs, false AS tl, false AS tr
// @fragment set
// @variant op=union
WITH *, lhs + [x IN rhs WHERE NOT x IN lhs] AS s, tl OR tr AS t
// @end-variant
// @variant op=intersect
WITH *, CASE WHEN size(lhs) <= size(rhs) THEN [x IN lhs WHERE x IN rhs]
             ELSE [x IN rhs WHERE x IN lhs] END AS s, tl OR tr AS t
// @end-variant
// @variant op=difference
WITH *, [x IN lhs WHERE NOT x IN rhs] AS s, tl OR tr AS t
// @end-variant
// @variant op=symdiff
WITH *, [x IN lhs WHERE NOT x IN rhs] + [x IN rhs WHERE NOT x IN lhs] AS s, tl OR tr AS t
// @end-variant
// @end
RETURN s AS result, t AS truncated;
