// reliability_counts — what a load wrote, for the kill suite (scripts/reliability_load.py):
// totals, distinct ids (a duplicate shows as count > distinct), and chunks without a vector.
// Columns: documents, document_ids, chunks, chunk_ids, chunks_without_embedding, entities,
// entity_ids, mentions, part_of, relations.
:param unused => null;

CALL () { MATCH (d:/*document_label*/Document) RETURN count(d) AS documents, count(DISTINCT /*document_id*/d.id) AS document_ids }
CALL () {
  MATCH (c:/*chunk_label*/Chunk)
  RETURN count(c) AS chunks, count(DISTINCT /*chunk_id*/c.id) AS chunk_ids,
         count(c) - count(/*chunk_embedding*/c.embedding) AS chunks_without_embedding
}
CALL () { MATCH (e:/*entity_label*/Entity) RETURN count(e) AS entities, count(DISTINCT /*entity_id*/e.id) AS entity_ids }
CALL () { MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e:/*entity_label*/Entity) RETURN count(*) AS mentions }
CALL () { MATCH (c:/*chunk_label*/Chunk)/*part_of*/-[:PART_OF]->(d:/*document_label*/Document) RETURN count(*) AS part_of }
CALL () { MATCH (h:/*entity_label*/Entity)-[r]->(t:/*entity_label*/Entity) RETURN count(r) AS relations }
RETURN documents, document_ids, chunks, chunk_ids, chunks_without_embedding, entities,
       entity_ids, mentions, part_of, relations
