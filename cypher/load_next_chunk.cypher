// load_next_chunk — consecutive chunks of a document (presets with a NEXT_CHUNK type only).
// The /*next_chunk*/ slot is the mapping's next_chunk_type.
// Columns: none.
:param rows => [{a: 'c-example', b: 'c-example-2'}];

UNWIND $rows AS row
MATCH (a:/*chunk_label*/Chunk {/*chunk_id*/id: row.a})
MATCH (b:/*chunk_label*/Chunk {/*chunk_id*/id: row.b})
MERGE (a)/*next_chunk*/-[:NEXT_CHUNK]->(b)
