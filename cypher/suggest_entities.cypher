// suggest_entities — close matches for a name that did not resolve: a fuzzy full-text query
// (each word followed by ~) over entity names and aliases, best first.
// Columns: name, score.
:param sel_index => 'entity_names';
:param sel_fuzzy => 'eur~';
:param sel_limit => 5;

// @fragment query
CALL db.index.fulltext.queryNodes($sel_index, $sel_fuzzy) YIELD node, score
WITH node AS e, score
RETURN /*entity_name*/e.name AS name, score
ORDER BY score DESC, name
LIMIT $sel_limit
// @end
;
