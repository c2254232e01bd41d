// select_mentioned — a tier of `auto` made of entity terms (entity, hop, khop, near), given by its
// entities (x, from the terms' out=entities variants, t their cap flag): the chunks that mention
// any of them (s), listed only when listing can pay off. Otherwise s is [] and m holds the
// entities, and cypher/retrieve_boost.cypher tests each candidate for membership
// (`EXISTS { (c)-[:MENTIONS]->(e) WHERE e IN m }`) instead of looking it up in a list.
// Why: on a graph with hub entities, near(x) reaches most of the KB; listing 56k-100k chunks cost
// 95 ms of a 242 ms query at 100k chunks (docs/performance.md), and a tier that large is ranked
// from U's over-fetched top anyway.
// Not listed when either holds (both cheap: degrees from the count store, one bounded count):
// - the entity with most mentions is in more than $exact_max chunks. The tier then holds more
//   than $exact_max chunks, so retrieve_boost would take its members from U's top anyway: the
//   same result, without the list.
// - the entities' mentions add up to more than $list_max: past this measured crossover testing
//   candidates is cheaper than listing and ranking the tier exactly, even with the rank plugin.
// Fragment "none" binds m to null for a tier given by its list (∩, a user's boost).
// Variant walk=plugin decides and lists with the rank plugin's guidedrag.mentioned (plugin/: the
// same rule and the same chunks, walked by the kernel's cursors; it sums the degrees only until
// they pass $tier_list_max). $tier_* name the schema for it (strings: Browser sets no map
// parameter from a :param line).
// Columns (Browser): size, listed, chunk_ids.
// @variants walk=cypher|plugin
:param sel_ids => ['euro'];
:param exact_max => 500;
:param tier_list_max => 3000;
:param tier_chunk_label => 'Chunk';
:param tier_mentions => 'MENTIONS';
:param tier_direction => 'out';

MATCH (e:/*entity_label*/Entity) WHERE /*entity_id*/e.id IN $sel_ids
WITH collect(e) AS x
// @fragment set
CALL (x) {
  // @variant walk=cypher
  CALL (x) {
    UNWIND x AS e
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
  CALL (x, over) {
    WITH x WHERE NOT over
    UNWIND CASE WHEN x = [] THEN [null] ELSE x END AS e
    OPTIONAL MATCH (c:/*chunk_label*/Chunk)/*mentions*/-[:MENTIONS]->(e)
    RETURN collect(DISTINCT c) AS s
  }
  RETURN s, CASE WHEN over THEN x END AS m
  // @end-variant
  // @variant walk=plugin
  WITH guidedrag.mentioned(x, $exact_max, $tier_list_max, $tier_chunk_label, $tier_mentions,
    $tier_direction) AS listing
  RETURN listing.chunks AS s, CASE WHEN listing.over THEN x END AS m
  // @end-variant
}
// @end
RETURN size(s) AS size, m IS NULL AS listed, [c IN s | /*chunk_id*/c.id][..25] AS chunk_ids;

WITH 1 AS one
// @fragment none
WITH *, null AS m
// @end
RETURN 0 AS size, m IS NULL AS listed, [] AS chunk_ids;
