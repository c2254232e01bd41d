package guidedrag;

import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.kernel.impl.coreapi.InternalTransaction;
import org.neo4j.storageengine.api.txstate.ReadableTransactionState;

/**
 * The score (1 + cos) / 2 of nodes against one query vector, as {@code vector.similarity.cosine}
 * gives it, read from the {@link VectorCache} when the node's embedding is there and from the
 * store (then cached) otherwise. One per procedure call: both procedures score through it, so
 * they read, validate and cache embeddings the same way.
 */
final class Scorer {

    /** Loops check the TerminationGuard when (count & GUARD_EVERY) == 0: every 1024 nodes. */
    static final int GUARD_EVERY = 1023;

    private final String procedure;
    private final String property;
    private final double[] q;
    private final double qNorm;
    private final VectorCache cache;
    private final String warning;

    private Scorer(String procedure, String property, double[] q, double qNorm, VectorCache cache, String warning) {
        this.procedure = procedure;
        this.property = property;
        this.q = q;
        this.qNorm = qNorm;
        this.cache = cache;
        this.warning = warning;
    }

    /**
     * Why this call could not use the embedding cache although it was asked to (null when it
     * could, or was told not to, or must not because the transaction wrote): the procedures
     * return it in their {@code warning} column and log it once.
     */
    String warning() {
        return warning;
    }

    /**
     * A scorer for {@code queryVector}, or null for the zero vector (cosine is undefined there, as
     * in Cypher, so nothing ranks). {@code options: {cache: false}} reads every embedding from
     * the store; a transaction with uncommitted data changes never touches the cache (it must see
     * its own writes).
     */
    static Scorer of(String procedure, GraphDatabaseService db, Transaction tx, String property,
            List<Double> queryVector, Map<String, Object> options) {
        if (queryVector == null || queryVector.isEmpty()) {
            throw new IllegalArgumentException(procedure + ": queryVector must be a non-empty list of floats");
        }
        final int dim = queryVector.size();
        final double[] q = new double[dim];
        double qq = 0.0;
        for (int i = 0; i < dim; i++) {
            Double x = queryVector.get(i);
            if (x == null) {
                throw new IllegalArgumentException(procedure + ": queryVector holds a null at " + i);
            }
            if (!Double.isFinite(x)) {
                // Cypher's cosine raises on NaN; a silent empty ranking would read as "no match"
                throw new IllegalArgumentException(procedure + ": queryVector holds " + x + " at " + i
                        + "; pass finite floats");
            }
            q[i] = x;
            qq += q[i] * q[i];
        }
        if (qq == 0.0) {
            return null;
        }
        final boolean useCache = options == null || !Boolean.FALSE.equals(options.get("cache"));
        VectorCache cache = null;
        String warning = null;
        if (useCache) {
            String dirty = transactionState(tx);
            if (dirty == null) {
                VectorCache.Lookup lookup = VectorCache.of(db);
                cache = lookup.cache();
                warning = lookup.warning();
            } else if (!dirty.isEmpty()) {
                warning = dirty;
            }
        }
        return new Scorer(procedure, property, q, Math.sqrt(qq), cache, warning);
    }

    /**
     * Null when this transaction has no uncommitted data changes (the cache may serve it); ""
     * when it has some (its own writes must be seen, so the cache is neither read nor filled:
     * by design, no warning); a warning when that cannot be told (internals not reachable),
     * which counts as changes.
     */
    private static String transactionState(Transaction tx) {
        try {
            if (tx instanceof InternalTransaction internal) {
                ReadableTransactionState state = internal.kernelTransaction().queryContext().getTransactionStateOrNull();
                return state == null || !state.hasDataChanges() ? null : "";
            }
            return "the embedding cache is off: the transaction is a " + tx.getClass().getName()
                    + ", whose uncommitted writes cannot be seen; embeddings are read from the store (exact, slower)";
        } catch (RuntimeException | LinkageError e) {
            return "the embedding cache is off: this Neo4j does not show a transaction's uncommitted writes ("
                    + e + "); embeddings are read from the store (exact, slower)";
        }
    }

    /**
     * The node's score; NaN when it has no such property or a zero embedding (Cypher's cosine is
     * null there, which a ranking drops). A property of the wrong type or length is an error.
     */
    double score(Node node) {
        String elementId = cache == null ? null : node.getElementId();
        VectorCache.Vec cached = cache == null ? null : cache.get(property, elementId);
        if (cached != null) {
            checkDim(cached.values().length, node);
            return scoreCached(cached, node);
        }
        long readEpoch = cache == null ? 0 : cache.epoch();
        Object value = node.getProperty(property, null);
        if (value instanceof double[] v) {
            double score = scoreDoubles(v, node);
            if (cache != null) {
                float[] f = new float[v.length];
                for (int i = 0; i < v.length; i++) {
                    f[i] = (float) v[i];
                }
                cache.put(property, elementId, vec(f), readEpoch);
            }
            return score;
        }
        if (value instanceof float[] f) {
            checkDim(f.length, node);
            VectorCache.Vec fresh = vec(f.clone());
            double score = scoreCached(fresh, node);
            if (cache != null) {
                cache.put(property, elementId, fresh, readEpoch);
            }
            return score;
        }
        if (value == null) {
            return Double.NaN;
        }
        throw new IllegalArgumentException(procedure + ": property `" + property + "` of node "
                + node.getElementId() + " is a " + value.getClass().getSimpleName() + ", not a list of floats");
    }

    private static VectorCache.Vec vec(float[] f) {
        double nn = 0;
        for (float x : f) {
            nn += (double) x * x;
        }
        return new VectorCache.Vec(f, Math.sqrt(nn));
    }

    private void notFinite(Node node) {
        throw new IllegalArgumentException(procedure + ": property `" + property + "` of node "
                + node.getElementId() + " holds NaN or infinity; re-embed that node");
    }

    private void checkDim(int length, Node node) {
        if (length != q.length) {
            throw new IllegalArgumentException(procedure + ": property `" + property + "` of node "
                    + node.getElementId() + " has " + length + " dimensions, the query vector " + q.length);
        }
    }

    /** Against a cached float32 vector. Four accumulators let the JIT overlap the adds. */
    private double scoreCached(VectorCache.Vec vec, Node node) {
        if (!Double.isFinite(vec.norm())) {
            notFinite(node);
        }
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

    private double scoreDoubles(double[] v, Node node) {
        checkDim(v.length, node);
        int dim = v.length;
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
        if (!Double.isFinite(nn)) {
            notFinite(node);
        }
        if (nn == 0.0) {
            return Double.NaN;
        }
        return toScore(((d0 + d1) + (d2 + d3)) / (qNorm * Math.sqrt(nn)));
    }

    private static double toScore(double cos) {
        if (cos > 1.0) {
            cos = 1.0;
        } else if (cos < -1.0) {
            cos = -1.0;
        }
        return (1.0 + cos) / 2.0;
    }
}
