// set_many — one set operation over many selections in one clause: op=union is A | B | C ...
// (the chunks in any, each once, in the order the chain of binary unions gives: each operand's
// new chunks after those before it); op=intersect A & B & C ... (in all: each step iterates the
// smaller of the running result and the next operand, as the binary chain does); op=difference
// A - B - C ... (those of A in none of the others); op=symdiff A ^ B ^ C ... (each step is the
// binary symdiff of the running result and the next operand, so the order is the binary chain's).
// The compiler fills /*operands*/ and /*flags*/ with the operands' lists and cap flags, each
// operand once where that is exact (A | A is A, A & A is A, A - B - B is A - B; not for ^, where
// A ^ A is empty), and renames s/t to its own. Why one clause: the planner's work grows with
// every binary `WITH *` step of a chain (200 union terms over 4 selections: 23 s to plan and 71 s
// to run, against 2.1 s and 1.8 s as one clause, the same 361 chunks), and planning is not
// stopped by the transaction timeout (a 200-term `-` chain with a 30 s timeout ran 39 s on the
// server, issue 34).
// Columns (Browser): result, truncated.
// @variants op=union|intersect|difference|symdiff
:param sel_a => ['c1', 'c2'];
:param sel_b => ['c2', 'c3'];
:param sel_c => ['c3', 'c2'];

WITH $sel_a AS a, $sel_b AS b, $sel_c AS c, false AS ta, false AS tb, true AS tc
// @fragment set
// @variant op=union
WITH *, reduce(acc = [], l IN /*operands*/[a, b, c] | acc + [x IN l WHERE NOT x IN acc]) AS s,
  any(f IN /*flags*/[ta, tb, tc] WHERE f) AS t
// @end-variant
// @variant op=intersect
WITH *, reduce(acc = /*operands*/[a, b, c][0], l IN /*operands*/[a, b, c][1..] |
  CASE WHEN size(acc) <= size(l) THEN [x IN acc WHERE x IN l] ELSE [x IN l WHERE x IN acc] END) AS s,
  any(f IN /*flags*/[ta, tb, tc] WHERE f) AS t
// @end-variant
// @variant op=difference
WITH *, reduce(acc = /*operands*/[a, b, c][0], l IN /*operands*/[a, b, c][1..] |
  [x IN acc WHERE NOT x IN l]) AS s,
  any(f IN /*flags*/[ta, tb, tc] WHERE f) AS t
// @end-variant
// @variant op=symdiff
WITH *, reduce(acc = /*operands*/[a, b, c][0], l IN /*operands*/[a, b, c][1..] |
  [x IN acc WHERE NOT x IN l] + [x IN l WHERE NOT x IN acc]) AS s,
  any(f IN /*flags*/[ta, tb, tc] WHERE f) AS t
// @end-variant
// @end
RETURN s AS result, t AS truncated;
