// server_version — the server's version and edition: every version-dependent feature is decided
// from these, once (db.ServerInfo).
// Columns: version, edition.
CALL dbms.components() YIELD name, versions, edition
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version, edition
