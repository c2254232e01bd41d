// load_bulk_index_states — the state of every index after `load --bulk` applied the migrations
// (the vector index populates over the imported chunks). Columns: name, state, percent
// (populationPercent).
SHOW INDEXES YIELD name, state, populationPercent
RETURN name, state, populationPercent AS percent
