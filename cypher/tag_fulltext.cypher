// Full-text entity tagger: entities whose names/aliases share words with the question (Lucene
// index `entity_names`, migration V0002). The tagger keeps those whose whole name occurs in it.
:param index_name => 'entity_names';
:param query_text => 'where was ada lovelace born';
:param limit => 25;
CALL db.index.fulltext.queryNodes($index_name, $query_text, {limit: $limit}) YIELD node, score
WITH node AS e, score
RETURN /*entity_name*/e.name AS name, /*entity_key*/e.name_key AS name_key, coalesce(/*entity_alias_keys*/e.alias_keys, []) AS alias_keys, score
ORDER BY score DESC, name
