// Resolve free-text entity names (e.g. an LLM's tags) to KB entities by normalised name or alias.
:param keys => ['ada lovelace', 'london'];
UNWIND range(0, size($keys) - 1) AS i
WITH i, $keys[i] AS key
OPTIONAL MATCH (e:/*entity_label*/`Entity`) WHERE /*entity_key*/e.name_key = key
WITH i, key, collect(/*entity_name*/e.name)[0] AS exact
OPTIONAL MATCH (a:/*entity_label*/`Entity`) WHERE exact IS NULL AND key IN /*entity_alias_keys*/a.alias_keys
WITH i, key, exact, collect(/*entity_name*/a.name)[0] AS alias_of
WITH i, key, coalesce(exact, alias_of) AS name
RETURN i, key, name
ORDER BY i
