// load_chunks — a batch of chunks with their PART_OF and MENTIONS, in one transaction, so a
// killed load leaves only whole chunks. Variant write=create: chunks known to be absent
// (load_chunk_ids found none of these ids), CREATE; write=merge: chunks the database already
// holds (a reload, or a resumed load), MERGE on id and on each relationship and SET the same
// values, so a rerun changes nothing. A chunk the loader creates carries :__GuidedRAGLoaded,
// the mark `kb wipe` deletes by. The embedding arrives as a VECTOR (Bolt 6: packed bytes,
// no per-float cost) or as a list on older servers; toFloatList stores a LIST<FLOAT> either way.
// Columns: none.
// @variants write=create|merge
:param rows => [{id: 'c-example', document_id: 'd-example', text: 'An example.', position: 0, metadata: {}, embedding: [0.6, 0.8], entity_ids: ['e-example']}];

UNWIND $rows AS row
MATCH (d:/*document_label*/Document {/*document_id*/id: row.document_id})
// @variant write=create
CREATE (c:/*chunk_label*/Chunk:__GuidedRAGLoaded {/*chunk_id*/id: row.id})
// @end-variant
// @variant write=merge
MERGE (c:/*chunk_label*/Chunk {/*chunk_id*/id: row.id})
ON CREATE SET c:__GuidedRAGLoaded
// @end-variant
SET /*chunk_text*/c.text = row.text, /*chunk_position*/c.position = row.position, /*chunk_embedding*/c.embedding = toFloatList(row.embedding),
    c += row.metadata, c += {document_id: row.document_id}
// @variant write=create
CREATE (c)/*part_of*/-[:PART_OF]->(d)
// @end-variant
// @variant write=merge
MERGE (c)/*part_of*/-[:PART_OF]->(d)
// @end-variant
WITH c, row
UNWIND row.entity_ids AS entity_id
MATCH (e:/*entity_label*/Entity {/*entity_id*/id: entity_id})
// @variant write=create
CREATE (c)/*mentions*/-[:MENTIONS]->(e)
// @end-variant
// @variant write=merge
MERGE (c)/*mentions*/-[:MENTIONS]->(e)
// @end-variant
