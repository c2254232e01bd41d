// reliability_counts — what a load wrote, for the kill suite (scripts/reliability_load.py):
// totals, distinct ids (a duplicate shows as count > distinct), and chunks without a vector.
// Columns: documents, document_ids, chunks, chunk_ids, chunks_without_embedding, entities,
// entity_ids, mentions, part_of, relations.
:param unused => null;

CALL () { MATCH (d:Document) RETURN count(d) AS documents, count(DISTINCT d.id) AS document_ids }
CALL () {
  MATCH (c:Chunk)
  RETURN count(c) AS chunks, count(DISTINCT c.id) AS chunk_ids,
         count(c) - count(c.embedding) AS chunks_without_embedding
}
CALL () { MATCH (e:Entity) RETURN count(e) AS entities, count(DISTINCT e.id) AS entity_ids }
CALL () { MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) RETURN count(*) AS mentions }
CALL () { MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN count(*) AS part_of }
CALL () { MATCH (h:Entity)-[r]->(t:Entity) RETURN count(r) AS relations }
RETURN documents, document_ids, chunks, chunk_ids, chunks_without_embedding, entities,
       entity_ids, mentions, part_of, relations
