// load_chunks_merge — chunks the database already holds (a reload, or a resumed load): MERGE
// on id and on each relationship, SET the same values, so a rerun changes nothing.
// Columns: none.
:param rows => [{id: 'c-example', document_id: 'd-example', text: 'An example.', position: 0, metadata: {}, embedding: [0.6, 0.8], entity_ids: ['e-example']}];

UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
MERGE (c:Chunk {id: row.id})
SET c.text = row.text, c.position = row.position, c.embedding = toFloatList(row.embedding),
    c += row.metadata, c += {document_id: row.document_id}
MERGE (c)-[:PART_OF]->(d)
WITH c, row
UNWIND row.entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})
MERGE (c)-[:MENTIONS]->(e)
