package guidedrag;

import java.util.List;
import java.util.Map;
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
 * Exact cosine ranking of a list of nodes, for GuidedRAG's "rank inside a selection".
 *
 * <p>Cypher's {@code vector.similarity.cosine(c.embedding, $q)} turns every stored float of every
 * selected chunk into a Cypher value before it multiplies; here the stored {@code LIST<FLOAT>}
 * comes back from {@link Node#getProperty} as a primitive {@code double[]} (or {@code float[]}),
 * and the dot product is a plain loop. The score is the same as Cypher's: (1 + cos) / 2.
 *
 * <p>Measured, that primitive read is no faster than Cypher's (the cost is the record store, not
 * the value conversion), so embeddings once read are kept as float32 in a {@link VectorCache},
 * invalidated on commit; the store is read only on a cache miss. When that cache cannot run,
 * every row says why in its {@code warning} column (and the dbms log says it once).
 *
 * <p>Only the top {@code k} are kept, plus any node tied with the k-th score ({@link TopK}), so that
 * a caller ordering by {@code score DESC, id} and cutting at k gets exactly the rows the
 * pure-Cypher query would give. Scoring is {@link Scorer}'s, shared with {@link RankTiers}.
 */
public class Rank {

    @Context
    public GraphDatabaseService db;

    @Context
    public Transaction tx;

    /** Ends the loop when the transaction is terminated or times out. */
    @Context
    public TerminationGuard guard;

    /** Where a cache that cannot run is reported (once per reason). */
    @Context
    public Log log;

    /** What {@code guidedrag.cacheInfo()} yields. */
    public static class CacheInfo {
        public long entries;
        public long bytes;
        public long budget;
        public String warning;

        public CacheInfo(long entries, long bytes, long budget, String warning) {
            this.entries = entries;
            this.bytes = bytes;
            this.budget = budget;
            this.warning = warning;
        }
    }

    @Procedure(name = "guidedrag.cacheInfo", mode = Mode.READ)
    @Description("guidedrag.cacheInfo() :: (entries, bytes, budget, warning) - the rank plugin's embedding "
            + "cache for this database (entries), the bytes held and allowed for all databases, and why "
            + "the cache cannot run here (null when it can).")
    public Stream<CacheInfo> cacheInfo() {
        VectorCache.Lookup lookup = VectorCache.of(db);
        if (lookup.warning() != null) {
            Warnings.log(log, lookup.warning());
        }
        long entries = lookup.cache() == null ? 0 : lookup.cache().entries();
        return Stream.of(new CacheInfo(entries, VectorCache.bytes(), VectorCache.BUDGET, lookup.warning()));
    }

    /** One ranked node. Public fields are the procedure's output columns. */
    public static class Hit {
        public Node node;
        public double score;
        /** Why the embedding cache could not serve this call (null when it did): see docs/plugin.md. */
        public String warning;

        public Hit(Node node, double score, String warning) {
            this.node = node;
            this.score = score;
            this.warning = warning;
        }
    }

    @Procedure(name = "guidedrag.rank", mode = Mode.READ)
    @Description(
            "guidedrag.rank(nodes, property, queryVector, k, options) :: (node, score, warning) - the k nodes most "
                    + "similar to queryVector by cosine over their list property, score = (1 + cos) / 2 "
                    + "(as vector.similarity.cosine); nodes tied with the k-th score are kept too. "
                    + "Nodes without the property are skipped. options: {cache: false} reads every "
                    + "embedding from the store instead of the plugin's commit-invalidated cache. warning: why the "
                    + "cache could not serve the call (null when it did).")
    public Stream<Hit> rank(
            @Name("nodes") List<Node> nodes,
            @Name("property") String property,
            @Name("queryVector") List<Double> queryVector,
            @Name("k") long k,
            @Name(value = "options", defaultValue = "{}") Map<String, Object> options) {
        if (nodes == null || nodes.isEmpty() || k <= 0) {
            return Stream.empty();
        }
        Scorer scorer = Scorer.of("guidedrag.rank", db, tx, property, queryVector, options);
        if (scorer == null) {
            return Stream.empty(); // cosine is undefined for a zero query, as in Cypher (null)
        }
        String warning = scorer.warning();
        if (warning != null) {
            Warnings.log(log, warning);
        }
        TopK top = new TopK(Math.min(k, nodes.size()));
        int[] seen = {0};
        Node[] all = nodes.toArray(new Node[0]);
        double[] scores = scorer.scores(all, all.length, () -> {
            if ((++seen[0] & Scorer.GUARD_EVERY) == 0) {
                guard.check();
            }
        });
        for (int i = 0; i < all.length; i++) {
            if (all[i] != null) {
                top.offer(all[i], scores[i]);
            }
        }
        return top.sorted().stream().map(s -> new Hit(s.node(), s.score(), warning));
    }
}
