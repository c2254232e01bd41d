// Graded tiers (steering "auto", a boost(...) selection) ranked in ONE rank-plugin call: the same
// rows as cypher/retrieve_boost.cypher's rank_tiers=plugin variant with no scope, where the
// plugin also reads U's candidates from the vector index. guidedrag.rankAuto (plugin/,
// docs/plugin.md) takes the tiers as the selection lists them (a tier too large to list comes
// empty, its entities in `members`), searches the index $index_name for U's top $u_fetch_k when
// every tier is ranked exactly, else its top $first_k, widened to $wide_k when those hold fewer
// than $fetch_k members of a tier ranked from them (retrieve_boost's two-step over-fetch), and
// ranks them as guidedrag.rankTiers does. The library takes this file where the plugin lists
// guidedrag.rankAuto and no scope or filter bounds U (retrieval/plans.py); a server without it
// runs retrieve_boost. Why one call: retrieve_boost's dozen Cypher steps around the two searches
// cost 0.5 ms (100k) to 0.8 ms (1M) a question on the synthetic KBs (docs/performance.md).
// $chunk_id_property: the chunk id property U's ties are ordered by (null: elementId), as
// retrieve_boost's ORDER BY score DESC, id. $universe: -1, or the tier every candidate must be in.
// Columns: id, document_id, document_title, text, score ((1+cos)/2), cosine, in_selection (in
// some tier), embedding, tier (name of the best tier or null), boost, tier_sizes (per tier; -1
// for a tier given by its entities), member_of (indices of every tier holding the chunk).
// Replace $query_vector with a real query embedding (e.g. from `guidedrag retrieve --json`).
// The example selection is boost(entity('euro'), near('euro')) as `auto` compiles it.
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
:param index_name => 'chunk_embedding';
:param embedding_property => 'embedding';
:param chunk_id_property => 'id';
:param tier_chunk_label => 'Chunk';
:param tier_entity_label => 'Entity';
:param tier_mentions => 'MENTIONS';
:param tier_direction => 'out';
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
// selection:end
WITH /*tiers*/[s1, s3] AS tiers, /*members*/[m1, m3] AS members
WITH tiers, members, [i IN range(0, size(tiers) - 1) |
       CASE WHEN members[i] IS NULL THEN size(tiers[i]) ELSE -1 END] AS tier_sizes
CALL guidedrag.rankAuto(tiers, members, $tier_weights, $query_vector, $fetch_k,
       {indexName: $index_name, idProperty: $chunk_id_property, property: $embedding_property,
        exactMax: $exact_max, uK: $u_fetch_k, firstK: $first_k, wideK: $wide_k, universe: $universe,
        chunkLabel: $tier_chunk_label, entityLabel: $tier_entity_label, mentions: $tier_mentions,
        direction: $tier_direction})
  YIELD node, score, memberOf, best, boost
WITH node AS c, score, memberOf AS member_of, tier_sizes, best, boost, best IS NOT NULL AS in_selection
ORDER BY score + boost DESC, /*chunk_id*/c.id
LIMIT $limit
// @include chunk_rows rows
       , $tier_names[best] AS tier, boost, tier_sizes, member_of
ORDER BY score + boost DESC, id
