// hub_entities — the entities with the most edges (mentions plus relations): the worst case for
// khop/near expansion, used by the reliability script's hub checks.
// Columns: name, mentions, relations.
:param limit => 5;

MATCH (e:Entity)
WITH e, COUNT { (e)<-[:MENTIONS]-(:Chunk) } AS mentions,
     COUNT { (e)--(:Entity) } AS relations
ORDER BY mentions + relations DESC, e.name
LIMIT $limit
RETURN e.name AS name, mentions, relations;
