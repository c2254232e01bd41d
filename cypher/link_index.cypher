// link_index — every entity of the KB with the keys the entity linker matches spans against
// (guidedrag_graph/linking/index.py), read once per GUIDEDRAG_RESOLUTION_CACHE_S so that linking
// a question asks Neo4j nothing. The same columns as link_entities, for every entity instead of
// a question's candidates: its normalised name and alias keys, its mention count (capped at
// $mention_cap chunks, so a hub entity costs no more than that) and whether a document is
// titled with its name (an index seek, V0004). A KB with more than $max_entities entities
// returns its count and no entities, having read nothing else (the count comes from the count
// store; the UNWIND of an empty list stops the scan before it starts, where a WHERE on the count
// is planned after it): the linker then asks link_entities per question, and its memory stays
// bounded whatever the KB's size.
// Columns: total, entities (a list of [name, name_key, alias_keys, mentions, document_subject],
// ordered by name).
:param max_entities => 100000;
:param mention_cap => 1000;
MATCH (n:/*entity_label*/Entity)
WITH count(n) AS total
CALL (total) {
  UNWIND CASE WHEN total <= $max_entities THEN [true] ELSE [] END AS small
  MATCH (e:/*entity_label*/Entity)
  CALL (e) {
    MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
    WITH c LIMIT $mention_cap
    RETURN count(c) AS mentions
  }
  WITH e, mentions ORDER BY /*entity_name*/e.name
  RETURN collect([/*entity_name*/e.name, /*entity_key*/e.name_key, coalesce(/*entity_alias_keys*/e.alias_keys, []),
    mentions, EXISTS { MATCH (d:/*document_label*/Document) WHERE /*document_title*/d.title = /*entity_name*/e.name }]) AS entities
}
RETURN total, entities
