// The guidedrag.rank plugin's embedding cache (plugin/, docs/plugin.md): entries held for this
// database, bytes held and the byte budget (a quarter of the server's heap by default). The
// planner sends the plugin no selection larger than the budget holds: beyond it, embeddings are
// read from the store at Cypher's speed.
// Columns: entries, bytes, budget.
CALL guidedrag.cacheInfo() YIELD entries, bytes, budget
RETURN entries, bytes, budget
