// Graded tiers (steering "auto", a boost(...) selection): rank EVERY chunk (U) by
// (1 + cos) / 2 + the weight of the best tier the chunk belongs to, in one READ query, without an
// exact scan of U. Because a tier's boost is uniform inside it, the top k of the boosted score
// lies in (each tier's top k by cosine) ∪ (U's top k): so each tier is ranked exactly when it
// holds at most $exact_max chunks (else its members are taken from U's over-fetched top
// $wide_k, the index path), and U's top $u_fetch_k comes from the vector index (searched at
// $u_fetch_k, as base RAG does, unless a tier needs the over-fetch). A tier top keeps the cosine
// it was ranked by; U's candidates (and a large tier's, taken from them) are scored
// here. Tiers are listed weight-descending: the first that holds a chunk is its best tier.
// Columns: id, document_id, document_title, text, score ((1+cos)/2), cosine, in_selection (in
// some tier), embedding, tier (name of the best tier or null), boost, tier_sizes (per tier),
// member_of (indices of every tier holding the chunk; calibration reads it). $limit rows at most.
// $universe: -1, or the index of the tier that is the universe (filters: every candidate is
// in it, so U's candidates outside it are dropped; retrieval/filters.py).
// Replace $query_vector with a real query embedding (e.g. from `guidedrag retrieve --json`).
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
CYPHER 25
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
WITH c, tier_sizes, score, member_of, best, coalesce($tier_weights[best], 0.0) AS boost
ORDER BY score + boost DESC, /*chunk_id*/c.id
LIMIT $limit
OPTIONAL MATCH (c)/*part_of*/-[:PART_OF]->(d:/*document_label*/Document)
RETURN /*chunk_id*/c.id AS id, /*document_id*/d.id AS document_id, /*document_title*/d.title AS document_title, /*chunk_text*/c.text AS text,
       score, 2 * score - 1 AS cosine, best IS NOT NULL AS in_selection,
       CASE WHEN $with_embedding THEN /*chunk_embedding*/c.embedding END AS embedding,
       $tier_names[best] AS tier, boost, tier_sizes, member_of
ORDER BY score + boost DESC, id
