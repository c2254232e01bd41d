// Graded tiers (steering "auto", a boost(...) selection): rank EVERY chunk (U) by
// (1 + cos) / 2 + the weight of the best tier the chunk belongs to, in one READ query, without an
// exact scan of U. Because a tier's boost is uniform inside it, the top k of the boosted score
// lies in (each tier's top k by cosine) ∪ (U's top k): so each tier is ranked exactly when it
// holds at most $exact_max chunks (else its members are taken from U's over-fetched top
// $wide_k, the index path), and U's top $u_fetch_k comes from the vector index (searched at
// $u_fetch_k, as base RAG does, unless a tier needs the over-fetch). U's candidates are kept in
// (score desc, id) order, so ties cut alike on every variant. Tiers are listed weight-descending:
// the first that holds a chunk is its best tier.
// Variants: u_search=search reads U with the SEARCH clause (2026.01+), u_search=index with
// db.index.vector.queryNodes (5.26 too). rank_tiers=cypher ranks the tiers here (a tier top keeps
// the cosine it was ranked by; U's candidates, and a large tier's taken from them, are scored
// after); rank_tiers=plugin makes it one guidedrag.rankTiers call (plugin/, docs/plugin.md),
// which scores every tier member from its float32 cache (~1 µs per chunk, where Cypher's cosine
// costs ~45), keeps each tier's top $fetch_k and U's top $u_fetch_k, and gives each candidate its
// best tier and boost; $exact_max is then its cache budget.
// Columns: id, document_id, document_title, text, score ((1+cos)/2), cosine, in_selection (in
// some tier), embedding, tier (name of the best tier or null), boost, tier_sizes (per tier),
// member_of (indices of every tier holding the chunk; calibration reads it). $limit rows at most.
// $universe: -1, or the index of the tier that is the universe (filters: every candidate is
// in it, so U's candidates outside it are dropped; retrieval/filters.py).
// Replace $query_vector with a real query embedding (e.g. from `guidedrag retrieve --json`).
// The example selection is boost(entity('euro'), near('euro')), as select_entity and select_near
// write them.
// @variants u_search=search|index rank_tiers=cypher|plugin
:param sel_0_ids => ['euro'];
:param sel_1_ids => ['euro'];
:param sel_1_cap => 10000;
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param u_fetch_k => 5;
:param wide_k => 50;
:param exact_max => 500;
:param tier_weights => [0.1, 0.05];
:param tier_names => ['E', 'N'];
:param limit => 5;
:param with_embedding => false;
:param universe => -1;
// @variant u_search=index
:param index_name => 'chunk_embedding';
// @end-variant
// @variant rank_tiers=plugin
:param embedding_property => 'embedding';
// @end-variant
// @variant u_search=search
CYPHER 25
// @end-variant
// selection:begin
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_0_ids
  MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s0
}
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_1_ids
  WITH collect(DISTINCT e) AS ents
  UNWIND CASE WHEN ents = [] THEN [null] ELSE ents END AS e
  OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  OPTIONAL MATCH (c)/*mentions*/-[:MENTIONS]->(e2:/*entity_label*/Entity)
  WITH ents, collect(DISTINCT e2) AS more
  WITH ents + [y IN more WHERE NOT y IN ents] AS grown
  WITH grown[..$sel_1_cap] AS ents
  UNWIND CASE WHEN ents = [] THEN [null] ELSE ents END AS e
  OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  RETURN collect(DISTINCT c) AS s1
}
// selection:end
WITH /*tiers*/[s0, s1] AS tiers
// @variant u_search=search
OPTIONAL CALL (tiers) {
  WITH tiers WHERE all(s IN tiers WHERE size(s) <= $exact_max)
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 LIMIT $u_fetch_k) SCORE AS score
  RETURN c, score
  UNION ALL
  WITH tiers WHERE any(s IN tiers WHERE size(s) > $exact_max)
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 LIMIT $wide_k) SCORE AS score
  RETURN c, score
}
WITH tiers, c ORDER BY score DESC, /*chunk_id*/c.id
WITH tiers, [n IN collect(c) WHERE $universe < 0 OR n IN tiers[$universe]] AS wide
// @end-variant
// @variant u_search=index
CALL (tiers) {
  CALL db.index.vector.queryNodes($index_name,
    CASE WHEN all(s IN tiers WHERE size(s) <= $exact_max) THEN $u_fetch_k ELSE $wide_k END,
    $query_vector) YIELD node, score
  WITH node ORDER BY score DESC, /*chunk_id*/node.id
  WITH collect(node) AS found
  RETURN [n IN found WHERE $universe < 0 OR n IN tiers[$universe]] AS wide
}
// @end-variant
// @variant rank_tiers=cypher
CALL (tiers, wide) {
  UNWIND range(0, size(tiers) - 1) AS i
  WITH tiers[i] AS s, wide
  CALL (s) {
    UNWIND CASE WHEN size(s) <= $exact_max THEN s ELSE [] END AS c
    WITH c, vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector) AS score
    ORDER BY score DESC, /*chunk_id*/c.id
    LIMIT $fetch_k
    RETURN collect({c: c, score: score}) AS exact_top
  }
  WITH CASE WHEN size(s) <= $exact_max THEN exact_top
            ELSE [n IN [n IN wide WHERE n IN s][..$fetch_k] | {c: n, score: null}] END AS top
  RETURN reduce(acc = [], t IN collect(top) | acc + t) AS tier_tops
}
WITH tiers, [s IN tiers | size(s)] AS tier_sizes,
     reduce(acc = [], h IN tier_tops + [n IN wide[..$u_fetch_k] | {c: n, score: null}] |
            CASE WHEN any(x IN acc WHERE x.c = h.c) THEN acc ELSE acc + h END) AS candidates
UNWIND candidates AS h
WITH tiers, tier_sizes, h.c AS c, h.score AS known
WITH c, tier_sizes,
     CASE WHEN known IS NULL
          THEN vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector)
          ELSE known END AS score,
     [i IN range(0, size(tiers) - 1) WHERE c IN tiers[i]] AS member_of
WITH c, tier_sizes, score, member_of, head(member_of) AS best
WITH c, tier_sizes, score, member_of, best, coalesce($tier_weights[best], 0.0) AS boost,
     best IS NOT NULL AS in_selection
// @end-variant
// @variant rank_tiers=plugin
CALL guidedrag.rankTiers(tiers, $tier_weights, wide, $embedding_property, $query_vector, $fetch_k,
                         {exactMax: $exact_max, uK: $u_fetch_k})
  YIELD node, score, boost, best, memberOf
WITH node AS c, score, boost, best, memberOf AS member_of, [s IN tiers | size(s)] AS tier_sizes,
     best IS NOT NULL AS in_selection
// @end-variant
ORDER BY score + boost DESC, /*chunk_id*/c.id
LIMIT $limit
// @include chunk_rows rows
       , $tier_names[best] AS tier, boost, tier_sizes, member_of
ORDER BY score + boost DESC, id
