// reliability_transactions — the transactions running on the server now, but this one: after
// the reliability suite nothing of ours may still run (a runaway query must have been stopped
// by the transaction timeout, GUIDEDRAG_QUERY_TIMEOUT).
// Columns: id, query, seconds, status.
:param unused => null;

SHOW TRANSACTIONS YIELD transactionId, currentQuery, elapsedTime, status
WHERE NOT currentQuery STARTS WITH 'SHOW TRANSACTIONS'
RETURN transactionId AS id, currentQuery AS query, elapsedTime.seconds AS seconds, status;
