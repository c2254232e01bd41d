// connection_check — the first query of every connection: proves the server answers, accepts
// the credentials and has the configured database (a missing one fails here, with a clear
// message, instead of in the middle of a command).
// Columns: ok.
RETURN 1 AS ok;
