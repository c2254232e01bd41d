// kb_stats — what is in the KB (`guidedrag kb stats`): the lexical graph's counts in one row.
// Columns: documents, chunks, chunks_without_embedding, entities, mentions.
CALL () { MATCH (d:/*document_label*/Document) RETURN count(d) AS documents }
CALL () { MATCH (c:/*chunk_label*/Chunk) RETURN count(c) AS chunks }
CALL () {
  MATCH (c:/*chunk_label*/Chunk) WHERE /*chunk_embedding*/c.embedding IS NULL
  RETURN count(c) AS chunks_without_embedding
}
CALL () { MATCH (e:/*entity_label*/Entity) RETURN count(e) AS entities }
CALL () {
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e:/*entity_label*/Entity)
  RETURN count(*) AS mentions
}
RETURN documents, chunks, chunks_without_embedding, entities, mentions
