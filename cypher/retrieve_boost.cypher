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
// A tier of entity terms may come unlisted (cypher/select_mentioned.cypher: its list empty, its
// member variable holding its entities): it is ranked like a tier over $exact_max, from U's
// over-fetched top, and a chunk is in it when it mentions one of those entities.
// The over-fetch in two steps (scope=none): U's top $first_k first; the top $wide_k only when
// those hold fewer than $fetch_k members of some tier ranked from them (or fewer than $u_fetch_k
// chunks in the universe). A tier too large to rank exactly is a large share of the KB, so its
// top $fetch_k is usually among the first few; they are then the same chunks as the wide
// search's (its results begin with the narrow one's: checked on the synthetic 100k KB) and the
// ranking is the same, without a $wide_k search (the vector index's cost grows with its LIMIT).
// Inside a scope (scope=index|exact|property) U's candidates come from the scope in one step.
// Columns: id, document_id, document_title, text, score ((1+cos)/2), cosine, in_selection (in
// some tier), embedding, tier (name of the best tier or null), boost, tier_sizes (per tier),
// member_of (indices of every tier holding the chunk; calibration reads it). $limit rows at most.
// $universe: -1, or the index of the tier that is the universe (filters: every candidate is
// in it, so U's candidates outside it are dropped; retrieval/filters.py).
// Replace $query_vector with a real query embedding (e.g. from `guidedrag retrieve --json`).
// The example selection is boost(entity('euro'), near('euro')) as `auto` compiles it: each tier
// by its entities (select_entity and select_near, out=entities), then select_mentioned.
// Variant scope (a trusted scope as the universe, retrieval/in_scope.py; none: no scope, the
// query as without one): scope=index reads U's candidates with a SEARCH filtered by the
// universe's chunk ids (2026.06+, the index declared WITH [c.id]), so every candidate is in the
// scope however small a fraction of the KB it is, in the same query; scope=exact (no filtered
// SEARCH: 5.26, an index without the id) ranks the universe tier exactly up to
// $scope_exact_max chunks and takes U's candidates from that exact ranking, not from the
// index's top over the whole KB. scope=property (2026.06+; a property scope whose predicate the
// SEARCH takes, on properties the index declares, retrieval/scope_predicate.py): the prelude
// ends with cypher/scope_search.cypher, the SEARCH filtered by the scope's own predicate, which
// binds `scope_top` (its $wide_k best chunks, best first); U's candidates are those, so the
// scope's ids are not listed for the SEARCH.
// @variants u_search=search|index rank_tiers=cypher|plugin scope=none|index|exact|property
:param sel_0_ids => ['euro'];
:param sel_2_ids => ['euro'];
:param sel_2_cap => 10000;
:param query_vector => [x IN range(1, 384) | 0.05];
:param fetch_k => 5;
:param u_fetch_k => 5;
:param first_k => 10;
:param wide_k => 50;
:param exact_max => 500;
:param tier_list_max => 3000;
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
// @variant scope=exact
:param scope_exact_max => 10000;
// @end-variant
// @variant u_search=search
CYPHER 25
// @end-variant
// selection:begin
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_0_ids
  WITH collect(DISTINCT e) AS s0
  RETURN s0, false AS t0
}
CALL (s0) {
  CALL (s0) {
    UNWIND s0 AS e
    WITH e, COUNT { ()/*mentions*/-[:MENTIONS]->(e) } AS degree
    ORDER BY degree DESC
    WITH collect({e: e, degree: degree})[..1] AS top, sum(degree) AS mentions
    UNWIND CASE WHEN top = [] THEN [null] ELSE top END AS h
    WITH mentions, h.e AS y, h.degree AS degree
    RETURN mentions > $tier_list_max OR coalesce(degree > $exact_max AND COUNT {
      MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(y)
      WITH DISTINCT c LIMIT $exact_max + 1
      RETURN c
    } > $exact_max, false) AS over
  }
  CALL (s0, over) {
    WITH s0 WHERE NOT over
    UNWIND CASE WHEN s0 = [] THEN [null] ELSE s0 END AS e
    OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
    RETURN collect(DISTINCT c) AS s1
  }
  RETURN s1, CASE WHEN over THEN s0 END AS m1
}
CALL () {
  MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_2_ids
  WITH collect(DISTINCT e) AS ents, false AS t2
  UNWIND CASE WHEN ents = [] THEN [null] ELSE ents END AS e
  OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
  OPTIONAL MATCH (c)/*mentions*/-[:MENTIONS]->(e2:/*entity_label*/Entity)
  WITH ents, t2, collect(DISTINCT e2) AS more
  WITH ents + [y IN more WHERE NOT y IN ents] AS grown, t2
  WITH grown[..$sel_2_cap] AS ents, t2 OR size(grown) > $sel_2_cap AS t2
  RETURN ents AS s2, t2
}
CALL (s2) {
  CALL (s2) {
    UNWIND s2 AS e
    WITH e, COUNT { ()/*mentions*/-[:MENTIONS]->(e) } AS degree
    ORDER BY degree DESC
    WITH collect({e: e, degree: degree})[..1] AS top, sum(degree) AS mentions
    UNWIND CASE WHEN top = [] THEN [null] ELSE top END AS h
    WITH mentions, h.e AS y, h.degree AS degree
    RETURN mentions > $tier_list_max OR coalesce(degree > $exact_max AND COUNT {
      MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(y)
      WITH DISTINCT c LIMIT $exact_max + 1
      RETURN c
    } > $exact_max, false) AS over
  }
  CALL (s2, over) {
    WITH s2 WHERE NOT over
    UNWIND CASE WHEN s2 = [] THEN [null] ELSE s2 END AS e
    OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
    RETURN collect(DISTINCT c) AS s3
  }
  RETURN s3, CASE WHEN over THEN s2 END AS m3
}
WITH *, null AS m_none
// @variant scope=property
// u_search=search: the SEARCH cypher/scope_search.cypher makes (its example predicate here:
// every chunk id); u_search=index: the same top from the 5.26 procedure (never chosen there).
// @variant u_search=search
CALL () {
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 WHERE /*chunk_id*/c.id >= '' LIMIT $wide_k) SCORE AS score
  WITH c ORDER BY score DESC, /*chunk_id*/c.id
  RETURN collect(c) AS scope_top
}
// @end-variant
// @variant u_search=index
CALL () {
  CALL db.index.vector.queryNodes($index_name, $wide_k, $query_vector) YIELD node, score
  WITH node ORDER BY score DESC, /*chunk_id*/node.id
  RETURN collect(node) AS scope_top
}
// @end-variant
// @end-variant
// selection:end
// @variant scope=none|index|exact
WITH /*tiers*/[s1, s3] AS tiers, /*members*/[m1, m3] AS members
WITH tiers, members,
// @end-variant
// @variant scope=property
WITH /*tiers*/[s1, s3] AS tiers, /*members*/[m1, m3] AS members, scope_top
WITH tiers, members, scope_top,
// @end-variant
// @variant scope=none|index|property
     [i IN range(0, size(tiers) - 1) | members[i] IS NULL AND size(tiers[i]) <= $exact_max] AS exact
// @end-variant
// @variant scope=exact
     [i IN range(0, size(tiers) - 1) | members[i] IS NULL AND size(tiers[i]) <=
        CASE WHEN i = $universe THEN $scope_exact_max ELSE $exact_max END] AS exact
// @end-variant
// @variant u_search=search
// @variant scope=none
OPTIONAL CALL (exact) {
  WITH exact WHERE all(x IN exact WHERE x)
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 LIMIT $u_fetch_k) SCORE AS score
  RETURN c, score
  UNION ALL
  WITH exact WHERE any(x IN exact WHERE NOT x)
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 LIMIT $first_k) SCORE AS score
  RETURN c, score
}
WITH tiers, members, exact, c ORDER BY score DESC, /*chunk_id*/c.id
WITH tiers, members, exact, [n IN collect(c) WHERE $universe < 0 OR n IN tiers[$universe]] AS first
WITH tiers, members, exact, first, [n IN first | [i IN range(0, size(tiers) - 1)
       WHERE members[i] IS NOT NULL AND EXISTS {
         (n)/*mentions*/-[:MENTIONS]->(e) WHERE e IN members[i]
       }]] AS first_in
WITH tiers, members, exact, first, first_in,
     all(x IN exact WHERE x) OR (size(first) >= $u_fetch_k AND all(i IN range(0, size(tiers) - 1)
       WHERE exact[i] OR size([j IN range(0, size(first) - 1)
         WHERE first[j] IN tiers[i] OR i IN first_in[j]][..$fetch_k]) >= $fetch_k)) AS enough
OPTIONAL CALL (enough) {
  WITH enough WHERE NOT enough
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 LIMIT $wide_k) SCORE AS score
  RETURN c, score
}
WITH tiers, members, exact, first, first_in, enough, c ORDER BY score DESC, /*chunk_id*/c.id
WITH tiers, members, exact, first, first_in, enough, collect(c) AS widened
WITH tiers, members, exact, first_in, enough, CASE WHEN enough THEN first
       ELSE [n IN widened WHERE $universe < 0 OR n IN tiers[$universe]] END AS wide
// @end-variant
// @variant scope=exact
OPTIONAL CALL (exact) {
  WITH exact WHERE all(x IN exact WHERE x)
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 LIMIT $u_fetch_k) SCORE AS score
  RETURN c, score
  UNION ALL
  WITH exact WHERE any(x IN exact WHERE NOT x)
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 LIMIT $wide_k) SCORE AS score
  RETURN c, score
}
// @end-variant
// @variant scope=index
WITH tiers, members, exact, [n IN tiers[$universe] | /*chunk_id*/n.id] AS universe_ids
OPTIONAL CALL (exact, universe_ids) {
  WITH exact, universe_ids WHERE all(x IN exact WHERE x)
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 WHERE /*chunk_id*/c.id IN universe_ids LIMIT $u_fetch_k) SCORE AS score
  RETURN c, score
  UNION ALL
  WITH exact, universe_ids WHERE any(x IN exact WHERE NOT x)
  MATCH (c:/*chunk_label*/Chunk)
    SEARCH c IN (VECTOR INDEX /*vector_index*/`chunk_embedding` FOR $query_vector
                 WHERE /*chunk_id*/c.id IN universe_ids LIMIT $wide_k) SCORE AS score
  RETURN c, score
}
// @end-variant
// @variant scope=index|exact
WITH tiers, members, exact, c ORDER BY score DESC, /*chunk_id*/c.id
WITH tiers, members, exact, [n IN collect(c) WHERE $universe < 0 OR n IN tiers[$universe]] AS wide
// @end-variant
// @variant scope=property
WITH tiers, members, exact,
     [n IN scope_top WHERE $universe < 0 OR n IN tiers[$universe]] AS wide
// @end-variant
// @end-variant
// @variant u_search=index
// @variant scope=none
CALL (tiers, exact) {
  CALL db.index.vector.queryNodes($index_name,
    CASE WHEN all(x IN exact WHERE x) THEN $u_fetch_k ELSE $first_k END,
    $query_vector) YIELD node, score
  WITH node ORDER BY score DESC, /*chunk_id*/node.id
  WITH collect(node) AS found
  RETURN [n IN found WHERE $universe < 0 OR n IN tiers[$universe]] AS first
}
WITH tiers, members, exact, first, [n IN first | [i IN range(0, size(tiers) - 1)
       WHERE members[i] IS NOT NULL AND EXISTS {
         (n)/*mentions*/-[:MENTIONS]->(e) WHERE e IN members[i]
       }]] AS first_in
WITH tiers, members, exact, first, first_in,
     all(x IN exact WHERE x) OR (size(first) >= $u_fetch_k AND all(i IN range(0, size(tiers) - 1)
       WHERE exact[i] OR size([j IN range(0, size(first) - 1)
         WHERE first[j] IN tiers[i] OR i IN first_in[j]][..$fetch_k]) >= $fetch_k)) AS enough
OPTIONAL CALL (tiers, enough) {
  WITH tiers, enough WHERE NOT enough
  CALL db.index.vector.queryNodes($index_name, $wide_k, $query_vector) YIELD node, score
  WITH tiers, enough, node ORDER BY score DESC, /*chunk_id*/node.id
  WITH tiers, enough, collect(node) AS found
  RETURN [n IN found WHERE $universe < 0 OR n IN tiers[$universe]] AS widened
}
WITH tiers, members, exact, first_in, enough, CASE WHEN enough THEN first ELSE widened END AS wide
// @end-variant
// @variant scope=index|exact
CALL (tiers, exact) {
  CALL db.index.vector.queryNodes($index_name,
    CASE WHEN all(x IN exact WHERE x) THEN $u_fetch_k ELSE $wide_k END,
    $query_vector) YIELD node, score
  WITH node ORDER BY score DESC, /*chunk_id*/node.id
  WITH collect(node) AS found
  RETURN [n IN found WHERE $universe < 0 OR n IN tiers[$universe]] AS wide
}
// @end-variant
// @variant scope=property
WITH tiers, members, exact,
     [n IN scope_top WHERE $universe < 0 OR n IN tiers[$universe]] AS wide
// @end-variant
// @end-variant
// @variant scope=exact
CALL (tiers, exact) {
  UNWIND CASE WHEN exact[$universe] THEN tiers[$universe] ELSE [] END AS c
  WITH c, vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector) AS score
  ORDER BY score DESC, /*chunk_id*/c.id
  LIMIT $wide_k
  RETURN collect(c) AS u_top
}
WITH tiers, members, exact, CASE WHEN exact[$universe] THEN u_top ELSE wide END AS wide
// @end-variant
// Each candidate's unlisted tiers (those it mentions an entity of), tested once: scope=none
// kept the first search's when no wide one followed.
// @variant scope=none
WITH tiers, members, exact, wide, CASE WHEN enough THEN first_in
       ELSE [n IN wide | [i IN range(0, size(tiers) - 1) WHERE members[i] IS NOT NULL AND EXISTS {
         (n)/*mentions*/-[:MENTIONS]->(e) WHERE e IN members[i]
       }]] END AS wide_in
// @end-variant
// @variant scope=index|exact|property
WITH tiers, members, exact, wide,
     [n IN wide | [i IN range(0, size(tiers) - 1) WHERE members[i] IS NOT NULL AND EXISTS {
         (n)/*mentions*/-[:MENTIONS]->(e) WHERE e IN members[i]
       }]] AS wide_in
// @end-variant
// @variant rank_tiers=cypher
CALL (tiers, members, exact, wide, wide_in) {
  UNWIND range(0, size(tiers) - 1) AS i
  WITH i, tiers[i] AS s, members[i] AS m, exact[i] AS x, wide, wide_in
  CALL (s, x) {
    UNWIND CASE WHEN x THEN s ELSE [] END AS c
    WITH c, vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector) AS score
    ORDER BY score DESC, /*chunk_id*/c.id
    LIMIT $fetch_k
    RETURN collect({c: c, score: score}) AS exact_top
  }
  WITH CASE WHEN x THEN exact_top
            ELSE [n IN [j IN range(0, size(wide) - 1) WHERE wide[j] IN s OR i IN wide_in[j] | wide[j]][..$fetch_k]
                  | {c: n, score: null}] END AS top
  RETURN reduce(acc = [], t IN collect(top) | acc + t) AS tier_tops
}
WITH tiers, members, [i IN range(0, size(tiers) - 1) |
       CASE WHEN members[i] IS NULL THEN size(tiers[i]) ELSE -1 END] AS tier_sizes,
     reduce(acc = [], h IN tier_tops + [n IN wide[..$u_fetch_k] | {c: n, score: null}] |
            CASE WHEN any(x IN acc WHERE x.c = h.c) THEN acc ELSE acc + h END) AS candidates
UNWIND candidates AS h
WITH tiers, members, tier_sizes, h.c AS c, h.score AS known
WITH c, tier_sizes,
     CASE WHEN known IS NULL
          THEN vector.similarity.cosine(/*chunk_embedding*/c.embedding, $query_vector)
          ELSE known END AS score,
     [i IN range(0, size(tiers) - 1) WHERE c IN tiers[i] OR (members[i] IS NOT NULL AND EXISTS {
        (c)/*mentions*/-[:MENTIONS]->(e) WHERE e IN members[i]
      })] AS member_of
WITH c, tier_sizes, score, member_of, head(member_of) AS best
WITH c, tier_sizes, score, member_of, best, coalesce($tier_weights[best], 0.0) AS boost,
     best IS NOT NULL AS in_selection
// @end-variant
// @variant rank_tiers=plugin
// An unlisted tier goes in as its members among U's over-fetched top (what the Cypher variant
// ranks it from), so rankTiers' memberOf holds it for every candidate from U; a candidate only
// from a listed tier's top is tested for the unlisted ones.
CALL guidedrag.rankTiers(
       [i IN range(0, size(tiers) - 1) | CASE WHEN members[i] IS NULL THEN tiers[i]
          ELSE [j IN range(0, size(wide) - 1) WHERE i IN wide_in[j] | wide[j]]
          END],
       $tier_weights, wide, $embedding_property, $query_vector, $fetch_k,
       {exactMax: $exact_max, uK: $u_fetch_k})
  YIELD node, score, memberOf
WITH node AS c, score,
     [i IN range(0, size(tiers) - 1) WHERE i IN memberOf OR (members[i] IS NOT NULL
        AND NOT node IN wide AND EXISTS { (node)/*mentions*/-[:MENTIONS]->(e) WHERE e IN members[i] })]
       AS member_of,
     [i IN range(0, size(tiers) - 1) |
       CASE WHEN members[i] IS NULL THEN size(tiers[i]) ELSE -1 END] AS tier_sizes
WITH c, score, member_of, tier_sizes, head(member_of) AS best
WITH c, score, member_of, tier_sizes, best, coalesce($tier_weights[best], 0.0) AS boost,
     best IS NOT NULL AS in_selection
// @end-variant
ORDER BY score + boost DESC, /*chunk_id*/c.id
LIMIT $limit
// @include chunk_rows rows
       , $tier_names[best] AS tier, boost, tier_sizes, member_of
ORDER BY score + boost DESC, id
