// load_next_chunk — consecutive chunks of a document (presets with a NEXT_CHUNK type only).
// The type is the mapping's next_chunk_type, put in by the loader in place of NEXT_CHUNK.
// Columns: none.
:param rows => [{a: 'c-example', b: 'c-example-2'}];

UNWIND $rows AS row
MATCH (a:Chunk {id: row.a})
MATCH (b:Chunk {id: row.b})
MERGE (a)-[:NEXT_CHUNK]->(b)
