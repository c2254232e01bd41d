// load_chunks_merge — chunks the database already holds (a reload, or a resumed load): MERGE
// on id and on each relationship, SET the same values, so a rerun changes nothing.
// Columns: none.
:param rows => [{id: 'c-example', document_id: 'd-example', text: 'An example.', position: 0, metadata: {}, embedding: [0.6, 0.8], entity_ids: ['e-example']}];

UNWIND $rows AS row
MATCH (d:/*document_label*/Document {/*document_id*/id: row.document_id})
MERGE (c:/*chunk_label*/Chunk {/*chunk_id*/id: row.id})
SET /*chunk_text*/c.text = row.text, /*chunk_position*/c.position = row.position, /*chunk_embedding*/c.embedding = toFloatList(row.embedding),
    c += row.metadata, c += {document_id: row.document_id}
MERGE (c)/*part_of*/-[:PART_OF]->(d)
WITH c, row
UNWIND row.entity_ids AS entity_id
MATCH (e:/*entity_label*/Entity {/*entity_id*/id: entity_id})
MERGE (c)/*mentions*/-[:MENTIONS]->(e)
