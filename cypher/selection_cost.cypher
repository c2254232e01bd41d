// selection_cost — the cheap counts a selection's cost is estimated from before it runs: the
// graph's totals (count store: O(1), no scan) and the relationship and MENTIONS degrees of the
// start entities of its terms (one index seek and a degree lookup each, no expansion).
// Columns: entities, chunks, mentions, relationships, degrees ([id, degree, mentions] per id).
:param sel_ids => ['euro', 'united states'];

CALL () { MATCH (e:/*entity_label*/Entity) RETURN count(e) AS entities }
CALL () { MATCH (c:/*chunk_label*/Chunk) RETURN count(c) AS chunks }
CALL () { MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->() RETURN count(*) AS mentions }
CALL () { MATCH ()-[r]->() RETURN count(r) AS relationships }
CALL () {
  UNWIND $sel_ids AS id
  OPTIONAL MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id = id
  RETURN collect([id, COUNT { (e)--() }, COUNT { ()/*mentions*/-[:MENTIONS]->(e) }]) AS degrees
}
RETURN entities, chunks, mentions, relationships, degrees
