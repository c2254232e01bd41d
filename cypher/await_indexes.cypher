// await_indexes — wait until every index is online (after `migrate` and `kb adopt` created them),
// at most $timeout_s seconds.
// Columns: none.
:param timeout_s => 600;
CALL db.awaitIndexes($timeout_s)
