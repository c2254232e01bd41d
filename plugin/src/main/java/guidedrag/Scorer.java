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
    /** The cache's embeddings of {@code property} (null without a cache), looked up once per call. */
    private final Map<Long, VectorCache.Vec> cached;
    private final String warning;

    private Scorer(String procedure, String property, double[] q, double qNorm, VectorCache cache, String warning) {
        this.procedure = procedure;
        this.property = property;
        this.q = q;
        this.qNorm = qNorm;
        this.cache = cache;
        this.cached = cache == null ? null : cache.entries(property);
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
    static String transactionState(Transaction tx) {
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
        long id = node.getId();
        VectorCache.Vec hit = cached == null ? null : cached.get(id);
        if (hit != null) {
            checkDim(hit.values().length, node);
            return scoreCached(hit, node);
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
                cache.put(property, id, vec(f), readEpoch);
            }
            return score;
        }
        if (value instanceof float[] f) {
            checkDim(f.length, node);
            VectorCache.Vec fresh = vec(f.clone());
            double score = scoreCached(fresh, node);
            if (cache != null) {
                cache.put(property, id, fresh, readEpoch);
            }
            return score;
        }
        if (value == null) {
            return Double.NaN;
        }
        throw new IllegalArgumentException(procedure + ": property `" + property + "` of node "
                + node.getElementId() + " is a " + value.getClass().getSimpleName() + ", not a list of floats");
    }

    /**
     * {@link #score} of {@code nodes[0..count)}, in order (NaN for a null node): the cache
     * look-ups first, then the dot products two at a time. Why: one at a time, each score waited
     * on its own chain of cache misses (map entry, key, vector) and on its 1.5 KB vector coming
     * from memory; two streams at once overlap those waits (measured on the MuSiQue questions'
     * tiers, inside the server: rankTiers 25-45% faster). Each score is the same arithmetic in
     * the same order as {@code score}'s, so it is bit for bit the same. A node the cache cannot
     * serve (not cached, a zero vector, the wrong length, NaN) is scored by {@code score} in its
     * turn, so the first bad node raises the same error as before. {@code step} runs per node
     * (the caller's termination check).
     */
    double[] scores(Node[] nodes, int count, Runnable step) {
        double[] out = new double[count];
        int[] pending = new int[count];
        VectorCache.Vec[] vecs = new VectorCache.Vec[count];
        int m = 0;
        for (int i = 0; i < count; i++) {
            step.run();
            Node node = nodes[i];
            if (node == null) {
                out[i] = Double.NaN;
                continue;
            }
            VectorCache.Vec vec = cached == null ? null : cached.get(node.getId());
            if (vec == null || vec.values().length != q.length || !Double.isFinite(vec.norm()) || vec.norm() == 0.0) {
                out[i] = score(node);
                continue;
            }
            pending[m] = i;
            vecs[m++] = vec;
        }
        int j = 0;
        for (; j + 1 < m; j += 2) {
            scorePair(vecs[j], vecs[j + 1], out, pending[j], pending[j + 1]);
        }
        if (j < m) {
            out[pending[j]] = scoreCached(vecs[j], nodes[pending[j]]);
        }
        return out;
    }

    /** {@link #scoreCached} of two vectors in one pass (each with its own four accumulators). */
    private void scorePair(VectorCache.Vec x, VectorCache.Vec y, double[] out, int at, int bt) {
        float[] a = x.values();
        float[] b = y.values();
        int dim = a.length;
        double a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
        int i = 0;
        for (; i + 3 < dim; i += 4) {
            double q0 = q[i], q1 = q[i + 1], q2 = q[i + 2], q3 = q[i + 3];
            a0 += a[i] * q0;
            a1 += a[i + 1] * q1;
            a2 += a[i + 2] * q2;
            a3 += a[i + 3] * q3;
            b0 += b[i] * q0;
            b1 += b[i + 1] * q1;
            b2 += b[i + 2] * q2;
            b3 += b[i + 3] * q3;
        }
        for (; i < dim; i++) {
            a0 += a[i] * q[i];
            b0 += b[i] * q[i];
        }
        out[at] = toScore(((a0 + a1) + (a2 + a3)) / (qNorm * x.norm()));
        out[bt] = toScore(((b0 + b1) + (b2 + b3)) / (qNorm * y.norm()));
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

    /**
     * Against a stored list of doubles. The norm is summed in one accumulator, in order, as
     * {@link #vec} sums the cached copy's: for float32 values (what embedding models give, and
     * what the cache keeps exactly) a node scores bit for bit the same from the store as from
     * the cache, so the first call after a start ranks as every later one does.
     */
    private double scoreDoubles(double[] v, Node node) {
        checkDim(v.length, node);
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
        double nn = 0;
        for (double x : v) {
            nn += x * x;
        }
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
