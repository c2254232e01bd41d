package guidedrag;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.stream.Stream;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.kernel.impl.coreapi.InternalTransaction;
import org.neo4j.procedure.Context;
import org.neo4j.storageengine.api.txstate.ReadableTransactionState;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

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
 * invalidated on commit; the store is read only on a cache miss.
 *
 * <p>Only the top {@code k} are kept (a bounded min-heap), plus any node tied with the k-th score,
 * so that a caller ordering by {@code score DESC, id} and cutting at k gets exactly the rows the
 * pure-Cypher query would give.
 */
public class Rank {

    @Context
    public GraphDatabaseService db;

    @Context
    public Transaction tx;

    /**
     * Whether this transaction has uncommitted data changes: then its own writes must be seen,
     * so the cache is neither read nor filled. Unknown (internals not reachable) counts as yes.
     */
    private boolean transactionIsClean() {
        try {
            if (tx instanceof InternalTransaction internal) {
                ReadableTransactionState state = internal.kernelTransaction().queryContext().getTransactionStateOrNull();
                return state == null || !state.hasDataChanges();
            }
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
        return false;
    }

    /** What {@code guidedrag.cacheInfo()} yields. */
    public static class CacheInfo {
        public long entries;
        public long bytes;
        public long budget;

        public CacheInfo(long entries, long bytes, long budget) {
            this.entries = entries;
            this.bytes = bytes;
            this.budget = budget;
        }
    }

    @Procedure(name = "guidedrag.cacheInfo", mode = Mode.READ)
    @Description("guidedrag.cacheInfo() :: (entries, bytes, budget) - the rank plugin's embedding cache "
            + "for this database (entries), and the bytes held and allowed for all databases.")
    public Stream<CacheInfo> cacheInfo() {
        VectorCache cache = VectorCache.of(db);
        return Stream.of(new CacheInfo(cache == null ? 0 : cache.entries(), VectorCache.bytes(), VectorCache.BUDGET));
    }

    /** One ranked node. Public fields are the procedure's output columns. */
    public static class Hit {
        public Node node;
        public double score;

        public Hit(Node node, double score) {
            this.node = node;
            this.score = score;
        }
    }

    @Procedure(name = "guidedrag.rank", mode = Mode.READ)
    @Description(
            "guidedrag.rank(nodes, property, queryVector, k) :: (node, score) - the k nodes most "
                    + "similar to queryVector by cosine over their list property, score = (1 + cos) / 2 "
                    + "(as vector.similarity.cosine); nodes tied with the k-th score are kept too. "
                    + "Nodes without the property are skipped. options: {cache: false} reads every "
                    + "embedding from the store instead of the plugin's commit-invalidated cache.")
    public Stream<Hit> rank(
            @Name("nodes") List<Node> nodes,
            @Name("property") String property,
            @Name("queryVector") List<Double> queryVector,
            @Name("k") long k,
            @Name(value = "options", defaultValue = "{}") Map<String, Object> options) {
        if (nodes == null || nodes.isEmpty() || k <= 0) {
            return Stream.empty();
        }
        if (queryVector == null || queryVector.isEmpty()) {
            throw new IllegalArgumentException("guidedrag.rank: queryVector must be a non-empty list of floats");
        }
        final int dim = queryVector.size();
        final double[] q = new double[dim];
        double qq = 0.0;
        for (int i = 0; i < dim; i++) {
            Double x = queryVector.get(i);
            if (x == null) {
                throw new IllegalArgumentException("guidedrag.rank: queryVector holds a null at " + i);
            }
            q[i] = x;
            qq += q[i] * q[i];
        }
        if (qq == 0.0) {
            return Stream.empty(); // cosine is undefined for a zero query, as in Cypher (null)
        }
        final double qNorm = Math.sqrt(qq);
        final boolean useCache = options == null || !Boolean.FALSE.equals(options.get("cache"));
        final VectorCache cache = useCache && transactionIsClean() ? VectorCache.of(db) : null;
        final int limit = (int) Math.min(k, nodes.size());
        // Min-heap on score: the head is the weakest of the current top k.
        PriorityQueue<Hit> heap = new PriorityQueue<>(limit + 1, Comparator.comparingDouble(h -> h.score));
        List<Hit> ties = new ArrayList<>(); // nodes equal to the current k-th score, evicted from the heap
        for (Node node : nodes) {
            if (node == null) {
                continue;
            }
            double score;
            VectorCache.Vec cached = cache == null ? null : cache.get(property, node.getId());
            if (cached != null) {
                checkDim(cached.values().length, dim, property, node);
                score = scoreCached(q, qNorm, cached);
            } else {
                long readEpoch = cache == null ? 0 : cache.epoch();
                Object value = node.getProperty(property, null);
                if (value instanceof double[] v) {
                    score = score(q, qNorm, v, dim, property, node);
                    if (cache != null) {
                        float[] f = new float[dim];
                        for (int i = 0; i < dim; i++) {
                            f[i] = (float) v[i];
                        }
                        cache.put(property, node.getId(), vec(f), readEpoch);
                    }
                } else if (value instanceof float[] f) {
                    checkDim(f.length, dim, property, node);
                    VectorCache.Vec fresh = vec(f.clone());
                    score = scoreCached(q, qNorm, fresh);
                    if (cache != null) {
                        cache.put(property, node.getId(), fresh, readEpoch);
                    }
                } else if (value == null) {
                    continue;
                } else {
                    throw new IllegalArgumentException("guidedrag.rank: property `" + property + "` of node "
                            + node.getElementId() + " is a " + value.getClass().getSimpleName()
                            + ", not a list of floats");
                }
            }
            if (Double.isNaN(score)) {
                continue; // zero vector: Cypher's cosine is null, which a ranking drops
            }
            if (heap.size() < limit) {
                heap.add(new Hit(node, score));
                continue;
            }
            double weakest = heap.peek().score;
            if (score > weakest) {
                Hit out = heap.poll();
                heap.add(new Hit(node, score));
                double newWeakest = heap.peek().score;
                if (out.score == newWeakest) {
                    ties.add(out);
                }
                ties.removeIf(t -> t.score < newWeakest);
            } else if (score == weakest) {
                ties.add(new Hit(node, score));
            }
        }
        List<Hit> result = new ArrayList<>(heap.size() + ties.size());
        result.addAll(heap);
        result.addAll(ties);
        result.sort((a, b) -> Double.compare(b.score, a.score));
        return result.stream();
    }

    private static VectorCache.Vec vec(float[] f) {
        double nn = 0;
        for (float x : f) {
            nn += (double) x * x;
        }
        return new VectorCache.Vec(f, Math.sqrt(nn));
    }

    /** (1 + cos) / 2 against a cached float32 vector; NaN for a zero vector. */
    private static double scoreCached(double[] q, double qNorm, VectorCache.Vec vec) {
        if (vec.norm() == 0.0) {
            return Double.NaN;
        }
        float[] v = vec.values();
        int dim = v.length;
        double d0 = 0, d1 = 0, d2 = 0, d3 = 0;
        int i = 0;
        for (; i + 3 < dim; i += 4) {
            d0 += v[i] * q[i];
            d1 += v[i + 1] * q[i + 1];
            d2 += v[i + 2] * q[i + 2];
            d3 += v[i + 3] * q[i + 3];
        }
        for (; i < dim; i++) {
            d0 += v[i] * q[i];
        }
        return toScore(((d0 + d1) + (d2 + d3)) / (qNorm * vec.norm()));
    }

    private static double toScore(double cos) {
        if (cos > 1.0) {
            cos = 1.0;
        } else if (cos < -1.0) {
            cos = -1.0;
        }
        return (1.0 + cos) / 2.0;
    }

    private static void checkDim(int length, int dim, String property, Node node) {
        if (length != dim) {
            throw new IllegalArgumentException("guidedrag.rank: property `" + property + "` of node "
                    + node.getElementId() + " has " + length + " dimensions, the query vector " + dim);
        }
    }

    /** (1 + cos) / 2, NaN for a zero vector. Four accumulators let the JIT overlap the adds. */
    private static double score(double[] q, double qNorm, double[] v, int dim, String property, Node node) {
        checkDim(v.length, dim, property, node);
        double d0 = 0, d1 = 0, d2 = 0, d3 = 0, n0 = 0, n1 = 0, n2 = 0, n3 = 0;
        int i = 0;
        for (; i + 3 < dim; i += 4) {
            double a = v[i], b = v[i + 1], c = v[i + 2], d = v[i + 3];
            d0 += a * q[i];
            d1 += b * q[i + 1];
            d2 += c * q[i + 2];
            d3 += d * q[i + 3];
            n0 += a * a;
            n1 += b * b;
            n2 += c * c;
            n3 += d * d;
        }
        for (; i < dim; i++) {
            d0 += v[i] * q[i];
            n0 += v[i] * v[i];
        }
        double nn = (n0 + n1) + (n2 + n3);
        if (nn == 0.0) {
            return Double.NaN;
        }
        return toScore(((d0 + d1) + (d2 + d3)) / (qNorm * Math.sqrt(nn)));
    }
}
