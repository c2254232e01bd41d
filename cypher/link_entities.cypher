// link_entities — candidate entities for the entity linker (guidedrag_graph/linking/entities.py): every
// entity whose normalised name equals one of the question's word n-grams ($grams, each already
// name_key-normalised), or is such an n-gram plus a disambiguator ("mercury (planet)",
// "paris, texas"), found by index seeks on name_key (V0002: equality and STARTS WITH range
// seeks, no scan, whatever the KB's size). Aliases, and names that differ from the question
// only by accents or punctuation ("Aschenbrödel" for "Aschenbrodel"), come from the full-text
// index over names and aliases ($query_text: the question's words, capitalised ones fuzzy);
// Python keeps a candidate only if one of its keys equals a span of the question, and chooses
// the spans. Each candidate carries its mention count (capped at $mention_cap chunks, so a
// hub entity costs no more than that) and whether a document is titled with its name (the
// entity a document is about).
// Columns: name, name_key, alias_keys, mentions, document_subject.
:param grams => ['ada lovelace', 'lovelace', 'ada', 'london'];
:param index_name => 'entity_names';
:param query_text => 'ada~1 lovelace~1 london~1';
:param fulltext_limit => 100;
:param mention_cap => 1000;
CALL () {
  UNWIND $grams AS g
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_key*/e.name_key = g
  RETURN e
  UNION
  UNWIND $grams AS g
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_key*/e.name_key STARTS WITH g + ' ('
  RETURN e
  UNION
  UNWIND $grams AS g
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_key*/e.name_key STARTS WITH g + ', '
  RETURN e
  UNION
  CALL db.index.fulltext.queryNodes($index_name, $query_text, {limit: $fulltext_limit})
    YIELD node
  RETURN node AS e
}
WITH DISTINCT e
CALL (e) {
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  WITH c LIMIT $mention_cap
  RETURN count(c) AS mentions
}
RETURN /*entity_name*/e.name AS name, /*entity_key*/e.name_key AS name_key, coalesce(/*entity_alias_keys*/e.alias_keys, []) AS alias_keys,
  mentions, EXISTS { MATCH (d:/*document_label*/Document) WHERE /*document_title*/d.title = /*entity_name*/e.name } AS document_subject
ORDER BY name
