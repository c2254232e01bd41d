// hub_entities — the entities with the most edges (mentions plus relations): the worst case for
// khop/near expansion, used by the reliability script's hub checks.
// Columns: name, mentions, relations.
:param limit => 5;

MATCH (e:/*entity_label*/Entity)
WITH e, COUNT { (e)<-[:MENTIONS]-(:/*chunk_label*/Chunk) } AS mentions,
     COUNT { (e)--(:/*entity_label*/Entity) } AS relations
ORDER BY mentions + relations DESC, /*entity_name*/e.name
LIMIT $limit
RETURN /*entity_name*/e.name AS name, mentions, relations;
