// Graded tiers through the guidedrag.rank plugin (plugin/, docs/plugin.md): the same ranking as
// retrieve_boost_index.cypher (5.26: the index procedure), but each tier's top $fetch_k comes from the procedure, which reads the
// embeddings from its float32 cache (~1 µs per chunk) instead of turning every stored float of
// every tier member into a Cypher value (~45 µs per chunk). A tier larger than $exact_max (the
// plugin's cache budget) still takes its members from U's over-fetched index top $wide_k; the few
// candidates are re-scored exactly, as in retrieve_boost_index.cypher (5.26: the index procedure).
// Columns: id, document_id, document_title, text, score ((1+cos)/2), cosine, in_selection (in
// some tier), embedding, tier (name of the best tier or null), boost, tier_sizes (per tier),
// member_of (indices of every tier holding the chunk; calibration reads it). $limit rows at most.
// Replace $query_vector with a real query embedding (e.g. from `guidedrag retrieve --json`).
:param sel_0_ids => ['euro'];
:param sel_1_ids => ['euro'];
:param sel_1_cap => 10000;
:param query_vector => [x IN range(1, 384) | 0.05];
:param index_name => 'chunk_embedding';
:param fetch_k => 5;
:param u_fetch_k => 5;
:param wide_k => 50;
:param exact_max => 500;
:param tier_weights => [0.1, 0.05];
:param tier_names => ['E', 'N'];
:param limit => 5;
:param with_embedding => false;
:param embedding_property => 'embedding';
// selection:begin
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s0
}
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_1_ids
  OPTIONAL MATCH (:/*chunk_label*/Chunk)-[:MENTIONS]->(e)<-[:MENTIONS]-(:/*chunk_label*/Chunk)-[:MENTIONS]->(e2:/*entity_label*/Entity)
  WITH collect(DISTINCT e) + collect(DISTINCT e2) AS ents
  UNWIND ents AS e
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s1
}
// selection:end
WITH /*tiers*/[s0, s1] AS tiers
CALL () {
  CALL db.index.vector.queryNodes($index_name, $wide_k, $query_vector) YIELD node
  RETURN collect(node) AS wide
}
CALL (tiers, wide) {
  UNWIND range(0, size(tiers) - 1) AS i
  WITH tiers[i] AS s, wide
  CALL (s) {
    CALL guidedrag.rank(CASE WHEN size(s) <= $exact_max THEN s ELSE [] END,
                        $embedding_property, $query_vector, $fetch_k) YIELD node, score
    WITH node AS c, score ORDER BY score DESC, /*chunk_id*/c.id
    LIMIT $fetch_k
    RETURN collect(c) AS exact_top
  }
  WITH CASE WHEN size(s) <= $exact_max THEN exact_top
            ELSE [n IN wide WHERE n IN s][..$fetch_k] END AS top
  RETURN reduce(acc = [], t IN collect(top) | acc + t) AS tier_tops
}
WITH tiers, [s IN tiers | size(s)] AS tier_sizes,
     reduce(acc = [], n IN wide[..$u_fetch_k] + tier_tops |
            CASE WHEN n IN acc THEN acc ELSE acc + n END) AS candidates
UNWIND candidates AS c
WITH c, tier_sizes, vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector) AS score,
     [i IN range(0, size(tiers) - 1) WHERE c IN tiers[i]] AS member_of
WITH c, tier_sizes, score, member_of, head(member_of) AS best
WITH c, tier_sizes, score, member_of, best, coalesce($tier_weights[best], 0.0) AS boost
ORDER BY score + boost DESC, /*chunk_id*/c.id
LIMIT $limit
OPTIONAL MATCH (c)/*part_of*/-[:PART_OF]->(d:/*document_label*/Document)
RETURN /*chunk_id*/c.id AS id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text,
       score, 2 * score - 1 AS cosine, best IS NOT NULL AS in_selection,
       CASE WHEN $with_embedding THEN /*chunk_embedding*/c.embedding END AS embedding,
       $tier_names[best] AS tier, boost, tier_sizes, member_of
ORDER BY score + boost DESC, id
