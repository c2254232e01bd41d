// reliability_transactions — the transactions running on the server now, but this one: after
// the reliability suite nothing of ours may still run (a runaway query must have been stopped
// by the transaction timeout, GUIDEDRAG_QUERY_TIMEOUT). A transaction whose query is still being
// parsed has no query text yet (null): it is kept, not dropped by the filter.
// Columns: id, query, seconds, ms (the elapsed time in milliseconds), status.
:param unused => null;

SHOW TRANSACTIONS YIELD transactionId, currentQuery, elapsedTime, status
WHERE currentQuery IS NULL OR NOT currentQuery STARTS WITH 'SHOW TRANSACTIONS'
RETURN transactionId AS id, currentQuery AS query, elapsedTime.seconds AS seconds,
  elapsedTime.milliseconds AS ms, status;
