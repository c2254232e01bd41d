package guidedrag;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
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
 * Graded tiers ranked in one call: the candidates of {@code steering="auto"}, each with its exact
 * score, its best tier and the boost that tier gives (cypher/retrieve_boost_plugin.cypher).
 *
 * <p>Why a procedure: in Cypher the same work is a subquery per tier, a list of candidates folded
 * with {@code reduce}, a membership test of every candidate against every tier list, and a second
 * cosine over every candidate's stored embedding (~45 µs each: the store read). Measured on the
 * MuSiQue questions, that machinery cost more than the tiers' graph work and the vector search
 * together; here it is one pass over each tier with hash look-ups, scored from the float32 cache.
 *
 * <p>The candidates are what the Cypher query takes, so any caller ordering them by
 * {@code score + boost DESC, id} and cutting at k gets the same rows: each tier's top {@code k} by
 * score (ties with the k-th kept), exact when the tier holds at most {@code exactMax} nodes, else
 * taken from {@code candidates} (U's over-fetched vector-index top); and the top {@code uK} of
 * {@code candidates} (every chunk, unboosted). Because a tier's boost is uniform inside it, the
 * boosted top k lies in that union whatever the weights (calibration relies on it).
 */
public class RankTiers {

    @Context
    public GraphDatabaseService db;

    @Context
    public Transaction tx;

    /** Ends the loops when the transaction is terminated or times out. */
    @Context
    public TerminationGuard guard;

    /** Where a cache that cannot run is reported (once per reason). */
    @Context
    public Log log;

    /** For Neo4j, which fills the context fields. */
    public RankTiers() {}

    /** For {@link RankAuto}, which ranks its candidates with its own context. */
    RankTiers(GraphDatabaseService db, Transaction tx, TerminationGuard guard, Log log) {
        this.db = db;
        this.tx = tx;
        this.guard = guard;
        this.log = log;
    }

    /** One candidate. Public fields are the procedure's output columns. */
    public static class TierHit {
        public Node node;
        public double score;
        public double boost;
        public Long best;
        public List<Long> memberOf;
        /** Why the embedding cache could not serve this call (null when it did): see docs/plugin.md. */
        public String warning;

        TierHit(Node node, double score, String warning) {
            this.node = node;
            this.score = score;
            this.memberOf = new ArrayList<>(2);
            this.warning = warning;
        }
    }

    @Procedure(name = "guidedrag.rankTiers", mode = Mode.READ)
    @Description(
            "guidedrag.rankTiers(tiers, weights, candidates, property, queryVector, k, options) :: "
                    + "(node, score, boost, best, memberOf, warning) - steering=auto's candidates: each tier's top k "
                    + "by cosine (score = (1 + cos) / 2) and the top options.uK (default k) of candidates "
                    + "(U's vector-index top), each with the index of its first (best) tier, that tier's "
                    + "weight as boost (0.0 outside every tier) and every tier holding it. A tier of more "
                    + "than options.exactMax nodes takes its top k from candidates. Tiers are listed "
                    + "strongest first, any number of them; order the rows by score + boost DESC, id. "
                    + "options.members (with options.chunkLabel, entityLabel, mentions, direction as for "
                    + "guidedrag.nearStep): per tier null, or the entities of a tier too large to list, whose "
                    + "members among candidates (chunks mentioning one of them) this call finds itself. warning: why "
                    + "the embedding cache could not serve the call (null when it did).")
    public Stream<TierHit> rankTiers(
            @Name("tiers") List<Object> tiers,
            @Name("weights") List<Double> weights,
            @Name("candidates") List<Node> candidates,
            @Name("property") String property,
            @Name("queryVector") List<Double> queryVector,
            @Name("k") long k,
            @Name(value = "options", defaultValue = "{}") Map<String, Object> options) {
        List<List<Node>> lists = tierLists(tiers);
        checkWeights(weights, lists.size());
        if (k <= 0) {
            return Stream.empty();
        }
        Scorer scorer = Scorer.of("guidedrag.rankTiers", db, tx, property, queryVector, options);
        if (scorer == null) {
            return Stream.empty(); // cosine is undefined for a zero query, as in Cypher (null)
        }
        long exactMax = longOption(options, "exactMax", Long.MAX_VALUE);
        long uK = longOption(options, "uK", k);
        if (exactMax < 0 || uK < 0) {
            throw new IllegalArgumentException("guidedrag.rankTiers: options exactMax and uK must be >= 0, got "
                    + exactMax + " and " + uK);
        }
        try (UnlistedTiers unlisted =
                UnlistedTiers.open(db, tx, guard, options == null ? null : options.get("members"), options, lists.size())) {
            return rank(lists, weights, candidates, scorer, k, exactMax, uK, unlisted);
        }
    }

    /** One finite weight >= 0 per tier, or the error that names the fix. */
    void checkWeights(List<Double> weights, int tiers) {
        if (weights == null || weights.size() != tiers) {
            throw new IllegalArgumentException("guidedrag.rankTiers: " + tiers + " tiers but "
                    + (weights == null ? "no" : String.valueOf(weights.size())) + " weights; give one weight per tier");
        }
        for (int i = 0; i < weights.size(); i++) {
            Double weight = weights.get(i);
            if (weight == null || !Double.isFinite(weight) || weight < 0.0) {
                throw new IllegalArgumentException("guidedrag.rankTiers: weight " + i + " is " + weight
                        + "; every weight must be a finite number >= 0");
            }
        }
    }

    /**
     * The candidates, as {@link #rankTiers} describes them, of checked arguments: {@code lists}
     * (an unlisted tier's list is replaced by its members among {@code candidates}),
     * {@code unlisted} null when every tier is listed.
     */
    Stream<TierHit> rank(List<List<Node>> lists, List<Double> weights, List<Node> candidates, Scorer scorer, long k,
            long exactMax, long uK, UnlistedTiers unlisted) {
        int[] seen = {0};
        String warning = scorer.warning();
        if (warning != null) {
            Warnings.log(log, warning);
        }
        // Every node is scored at most once, however many tiers (and U) hold it. Nodes are keys by
        // their entity identity (equal within this transaction), so no id is looked up or built.
        Map<Node, Double> scores = new HashMap<>();
        // U: the given candidates (the vector index's top); its top uK are candidates themselves.
        Set<Node> fromIndex = new HashSet<>();
        TopK uTop = new TopK(uK);
        List<Node> unique = new ArrayList<>();
        for (Node node : candidates == null ? List.<Node>of() : candidates) {
            if (node != null && fromIndex.add(node)) {
                unique.add(node);
            }
        }
        scoreMissing(scorer, unique, scores, seen);
        for (Node node : unique) {
            uTop.offer(node, scores.get(node));
        }
        // Tiers given by their entities: listed here from U's candidates, each candidate tested
        // once against every such tier over its cached entity list.
        if (unlisted != null) {
            for (int i = 0; i < lists.size(); i++) {
                if (unlisted.given(i)) {
                    lists.set(i, new ArrayList<>());
                }
            }
            for (Node node : unique) {
                for (Long i : unlisted.of(node)) {
                    lists.get(i.intValue()).add(node);
                }
            }
        }
        Map<Node, TierHit> hits = new LinkedHashMap<>();
        uTop.sorted().forEach(s -> hits.putIfAbsent(s.node(), new TierHit(s.node(), s.score(), warning)));

        // Each tier's top k: exact over its members, or (too large) over those among U's candidates.
        for (List<Node> tier : lists) {
            TopK top = new TopK(k);
            boolean exact = tier.size() <= exactMax;
            if (exact) {
                scoreMissing(scorer, tier, scores, seen);
            }
            for (Node node : tier) {
                tick(seen);
                if (exact || fromIndex.contains(node)) {
                    top.offer(node, scores.get(node));
                }
            }
            top.sorted().forEach(s -> hits.putIfAbsent(s.node(), new TierHit(s.node(), s.score(), warning)));
        }

        // Membership of every candidate, tier by tier (a node repeated inside a tier counts once).
        for (int i = 0; i < lists.size(); i++) {
            Long index = (long) i;
            for (Node node : lists.get(i)) {
                tick(seen);
                TierHit hit = hits.get(node);
                if (hit != null && (hit.memberOf.isEmpty() || !hit.memberOf.get(hit.memberOf.size() - 1).equals(index))) {
                    hit.memberOf.add(index);
                }
            }
        }
        if (unlisted != null) {
            testUnlisted(hits, fromIndex, unlisted);
        }
        for (TierHit hit : hits.values()) {
            if (!hit.memberOf.isEmpty()) {
                hit.best = hit.memberOf.get(0);
                hit.boost = weights.get(hit.best.intValue());
            }
        }
        return hits.values().stream();
    }

    /**
     * options.members: per tier, null (a listed tier) or the entities an unlisted tier is given by
     * (cypher/select_mentioned.cypher). Null when the option is absent.
     */
    @SuppressWarnings("unchecked")
    static List<List<Node>> unlistedTiers(Object value, int tiers) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof List<?> list) || list.size() != tiers) {
            throw new IllegalArgumentException("guidedrag tiers: option members must be a list of one entity "
                    + "list (or null) per tier, " + tiers + " in all");
        }
        for (Object m : list) {
            if (m != null && !(m instanceof List<?>)) {
                throw new IllegalArgumentException("guidedrag.rankTiers: option members holds a "
                        + m.getClass().getSimpleName() + ", not a list of entities or null");
            }
        }
        return (List<List<Node>>) list;
    }

    /**
     * A candidate that came from a listed tier's top, not from U's candidates, may still be in an
     * unlisted tier (it mentions one of its entities): the caller gave those tiers as their members
     * among U's candidates only, so test the others here, and keep memberOf ascending.
     */
    private static void testUnlisted(Map<Node, TierHit> hits, Set<Node> fromIndex, UnlistedTiers unlisted) {
        for (TierHit hit : hits.values()) {
            if (fromIndex.contains(hit.node)) {
                continue;
            }
            List<Long> more = unlisted.of(hit.node);
            if (more.isEmpty()) {
                continue;
            }
            for (Long i : more) {
                if (!hit.memberOf.contains(i)) {
                    hit.memberOf.add(i);
                }
            }
            hit.memberOf.sort(null);
        }
    }

    static String stringOption(Map<String, Object> options, String name) {
        Object value = options.get(name);
        if (value instanceof String text) {
            return text;
        }
        throw new IllegalArgumentException("guidedrag tiers: option " + name + " must be a string (set it in the "
                + "options map), got " + (value == null ? "none" : value.getClass().getSimpleName()));
    }

    /** Scores every node of {@code nodes} that {@code scores} lacks into it, in one batch. */
    private void scoreMissing(Scorer scorer, List<Node> nodes, Map<Node, Double> scores, int[] seen) {
        Node[] missing = new Node[nodes.size()];
        int count = 0;
        for (Node node : nodes) {
            if (!scores.containsKey(node)) {
                missing[count++] = node;
            }
        }
        double[] found = scorer.scores(missing, count, () -> tick(seen));
        for (int i = 0; i < count; i++) {
            scores.put(missing[i], found[i]);
        }
    }

    /** Counts one step of a loop and checks the TerminationGuard every 1024 of them. */
    private void tick(int[] seen) {
        if ((++seen[0] & Scorer.GUARD_EVERY) == 0) {
            guard.check();
        }
    }

    /** The tiers as node lists, nulls dropped (a null member is no chunk). */
    static List<List<Node>> tierLists(List<Object> tiers) {
        List<List<Node>> lists = new ArrayList<>();
        if (tiers == null) {
            return lists;
        }
        for (int i = 0; i < tiers.size(); i++) {
            Object tier = tiers.get(i);
            if (!(tier instanceof List<?> members)) {
                throw new IllegalArgumentException("guidedrag.rankTiers: tier " + i + " is "
                        + (tier == null ? "null" : "a " + tier.getClass().getSimpleName()) + ", not a list of nodes");
            }
            List<Node> nodes = new ArrayList<>(members.size());
            for (Object member : members) {
                if (member == null) {
                    continue;
                }
                if (!(member instanceof Node node)) {
                    throw new IllegalArgumentException("guidedrag.rankTiers: tier " + i + " holds a "
                            + member.getClass().getSimpleName() + ", not a node");
                }
                nodes.add(node);
            }
            lists.add(nodes);
        }
        return lists;
    }

    static long longOption(Map<String, Object> options, String name, long fallback) {
        Object value = options == null ? null : options.get(name);
        if (value == null) {
            return fallback;
        }
        if (value instanceof Number number) {
            return number.longValue();
        }
        throw new IllegalArgumentException("guidedrag.rankTiers: option " + name + " must be an integer, got "
                + value.getClass().getSimpleName());
    }
}
