package guidedrag;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;
import org.neo4j.procedure.TerminationGuard;

/**
 * {@code steering="auto"} after its tiers, in one call (cypher/retrieve_auto.cypher): U's
 * candidates from the vector index, the test of whether they hold enough members of each tier
 * ranked from them, the wider search when they do not, and {@link RankTiers}'s ranking.
 *
 * <p>Why: cypher/retrieve_boost.cypher does the same in a dozen Cypher steps (two searches in an
 * optional union, two sorts and collects, a membership test per candidate and tier, the
 * {@code enough} decision, the optional wide search, the rankTiers call and the columns after
 * it). Replayed on the synthetic KBs' hub questions, the one call is 0.5 ms (100k) and 0.8 ms
 * (1M) cheaper than those steps, whose query cost 1.29x and 1.60x VectorRetriever's; here they
 * are one pass over ten or fifty nodes.
 * The candidates, the decision and the ranking are the template's, so the rows are the same
 * (tests/test_tier_overfetch.py compares them with both of retrieve_boost's ranking variants).
 */
public class RankAuto {

    @Context
    public GraphDatabaseService db;

    @Context
    public Transaction tx;

    @Context
    public TerminationGuard guard;

    @Context
    public Log log;

    @Procedure(name = "guidedrag.rankAuto", mode = Mode.READ)
    @Description("guidedrag.rankAuto(tiers, members, weights, queryVector, k, options) :: "
            + "(node, score, boost, best, memberOf, warning) - steering=auto's ranking in one call. U's candidates "
            + "are the vector index options.indexName's top options.uK (default k) when every tier is ranked "
            + "exactly (listed, members[i] null, at most options.exactMax nodes), else its top options.firstK, "
            + "widened to options.wideK when those hold fewer than options.uK chunks or fewer than k members of a "
            + "tier ranked from them; ordered by score, then the chunk id options.idProperty (null: elementId). "
            + "options.universe >= 0: only candidates in that (listed) tier. Then ranked as guidedrag.rankTiers "
            + "ranks them (options.property, exactMax, uK, and members with chunkLabel, entityLabel, mentions, "
            + "direction).")
    public Stream<RankTiers.TierHit> rankAuto(
            @Name("tiers") List<Object> tiers,
            @Name("members") List<Object> members,
            @Name("weights") List<Double> weights,
            @Name("queryVector") List<Double> queryVector,
            @Name("k") long k,
            @Name("options") Map<String, Object> options) {
        if (options == null) {
            throw new IllegalArgumentException("guidedrag.rankAuto: options must be a map (indexName, property, ...)");
        }
        List<List<Node>> lists = RankTiers.tierLists(tiers);
        long exactMax = RankTiers.longOption(options, "exactMax", Long.MAX_VALUE);
        long uK = RankTiers.longOption(options, "uK", k);
        long firstK = RankTiers.longOption(options, "firstK", uK);
        long wideK = RankTiers.longOption(options, "wideK", firstK);
        long universe = RankTiers.longOption(options, "universe", -1);
        if (exactMax < 0 || uK < 0 || firstK < 0 || wideK < 0 || universe >= lists.size()) {
            throw new IllegalArgumentException("guidedrag.rankAuto: options exactMax, uK, firstK and wideK must be >= 0 "
                    + "and universe below the number of tiers (" + lists.size() + "), got " + exactMax + ", " + uK
                    + ", " + firstK + ", " + wideK + " and " + universe);
        }
        String indexName = RankTiers.stringOption(options, "indexName");
        Object idValue = options.get("idProperty");
        if (idValue != null && !(idValue instanceof String)) {
            throw new IllegalArgumentException("guidedrag.rankAuto: option idProperty must be a property name or null "
                    + "(elementId), got " + idValue.getClass().getSimpleName());
        }
        String idProperty = (String) idValue;
        if (k <= 0) {
            return Stream.empty(); // as rankTiers
        }
        // Checks the query as rankTiers does; null for the zero vector, where nothing ranks.
        Scorer scorer = Scorer.of("guidedrag.rankAuto", db, tx, RankTiers.stringOption(options, "property"),
                queryVector, options);
        if (scorer == null) {
            return Stream.empty();
        }
        RankTiers ranker = new RankTiers(db, tx, guard, log);
        ranker.checkWeights(weights, lists.size());
        // One walk for the unlisted tiers, shared by the decision below and the ranking.
        try (UnlistedTiers unlisted = UnlistedTiers.open(db, tx, guard, members, options, lists.size())) {
            boolean[] exact = new boolean[lists.size()];
            boolean allExact = true;
            for (int i = 0; i < lists.size(); i++) {
                exact[i] = (unlisted == null || !unlisted.given(i)) && lists.get(i).size() <= exactMax;
                allExact &= exact[i];
            }
            Set<Node> inUniverse = universe >= 0 ? new HashSet<>(lists.get((int) universe)) : null;
            List<Node> first = kept(IndexSearch.top(tx, indexName, queryVector, allExact ? uK : firstK, idProperty),
                    inUniverse);
            List<Node> wide = first;
            if (!allExact && !enough(first, lists, exact, k, uK, unlisted)) {
                wide = kept(IndexSearch.top(tx, indexName, queryVector, wideK, idProperty), inUniverse);
            }
            return ranker.rank(lists, weights, wide, scorer, k, exactMax, uK, unlisted);
        }
    }

    /**
     * Whether U's first candidates decide the ranking: at least uK of them, and for every tier
     * not ranked exactly at least k of its members among them (so its top k is there).
     */
    private static boolean enough(List<Node> first, List<List<Node>> lists, boolean[] exact, long k, long uK,
            UnlistedTiers unlisted) {
        if (first.size() < uK) {
            return false;
        }
        for (int i = 0; i < lists.size(); i++) {
            if (exact[i]) {
                continue;
            }
            boolean given = unlisted != null && unlisted.given(i);
            Set<Node> listed = given ? null : new HashSet<>(lists.get(i));
            Long index = (long) i;
            long count = 0;
            for (int j = 0; j < first.size() && count < k; j++) {
                if (given ? unlisted.of(first.get(j)).contains(index) : listed.contains(first.get(j))) {
                    count++;
                }
            }
            if (count < k) {
                return false;
            }
        }
        return true;
    }

    private static List<Node> kept(List<Node> found, Set<Node> inUniverse) {
        if (inUniverse == null) {
            return found;
        }
        List<Node> out = new ArrayList<>(found.size());
        for (Node node : found) {
            if (inUniverse.contains(node)) {
                out.add(node);
            }
        }
        return out;
    }
}
