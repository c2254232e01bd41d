package guidedrag;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.IndexQueryConstraints;
import org.neo4j.internal.kernel.api.IndexReadSession;
import org.neo4j.internal.kernel.api.NodeValueIndexCursor;
import org.neo4j.internal.kernel.api.QueryContext;
import org.neo4j.internal.kernel.api.Read;
import org.neo4j.internal.kernel.api.SchemaRead;
import org.neo4j.kernel.api.KernelTransaction;
import org.neo4j.kernel.impl.coreapi.InternalTransaction;

/**
 * A node vector index's top n for a query vector, read through the kernel's index cursor: the
 * seek Cypher's {@code SEARCH ... LIMIT n} and {@code db.index.vector.queryNodes} make (a nearest
 * neighbours predicate), without a Cypher operator around it, the query first made what the
 * index's similarity function takes ({@link #validQuery}). Rows come ordered as the Cypher
 * templates order them: score descending, then the chunk id property ascending. (Calling
 * {@code db.index.vector.queryNodes} through {@code tx.execute} instead kept only a third of the
 * time saved: a nested query costs about what the Cypher steps around the search did.)
 *
 * <p>Internal API. {@code IndexDescriptor} and {@code PropertyIndexQuery}'s parent type live in
 * neo4j-schema, which is not among the API jars the plugin compiles against, and
 * {@code nearestNeighbors} returns a different type in 5.26 and 2026.x: so the four calls that
 * name them (and the index's config and provider) are looked up once, by name (as {@link TierWalk#DEGREE} is). The cursor is the
 * transaction's, so the kernel applies the caller's read privileges to what it returns.
 */
final class IndexSearch {

    private IndexSearch() {}

    /** One hit: the node and the index's score for it. */
    record Hit(Node node, float score, Object id) {}

    /**
     * The index {@code indexName}'s top {@code limit} nodes for {@code query}, best first (ties by
     * the {@code idProperty} value, as the templates' {@code ORDER BY score DESC, c.id}).
     */
    static List<Node> top(Transaction tx, String indexName, List<Double> query, long limit, String idProperty) {
        if (!(tx instanceof InternalTransaction internal)) {
            throw new IllegalStateException("guidedrag.rankAuto: the transaction is a " + tx.getClass().getName()
                    + ", not the kernel's; rank with guidedrag.rankTiers (GUIDEDRAG_RANK_PLUGIN=off to stop using it)");
        }
        List<Hit> hits = new ArrayList<>();
        if (limit <= 0) {
            return List.of();
        }
        KernelTransaction ktx = internal.kernelTransaction();
        try (NodeValueIndexCursor cursor =
                ktx.cursors().allocateNodeValueIndexCursor(ktx.cursorContext(), ktx.memoryTracker())) {
            Object index = vectorIndex(ktx, indexName);
            IndexReadSession session = (IndexReadSession) READ_SESSION.invoke(ktx.dataRead(), index);
            Object predicates = Array.newInstance(PREDICATE, 1);
            Array.set(predicates, 0, NEAREST.invoke((int) Math.min(limit, Integer.MAX_VALUE), validQuery(index, query)));
            SEEK.invoke(ktx.dataRead(), ktx.queryContext(), session, cursor, IndexQueryConstraints.unconstrained(),
                    predicates);
            while (cursor.next()) {
                hits.add(new Hit(internal.newNodeEntity(cursor.nodeReference()), cursor.score(), null));
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("guidedrag.rankAuto: the vector index search failed: " + e, e);
        }
        // Ties in score (equal embeddings) are broken by the id, read only for the tied.
        List<Hit> ordered = new ArrayList<>(hits.size());
        for (Hit h : hits) {
            boolean tied = false;
            for (Hit other : hits) {
                if (other != h && other.score() == h.score()) {
                    tied = true;
                    break;
                }
            }
            ordered.add(tied ? new Hit(h.node(), h.score(), idOf(h.node(), idProperty)) : h);
        }
        ordered.sort(Comparator.comparingDouble((Hit h) -> -h.score()).thenComparing(Hit::id, IndexSearch::compareIds));
        List<Node> nodes = new ArrayList<>(ordered.size());
        for (Hit h : ordered) {
            nodes.add(h.node());
        }
        return nodes;
    }

    /** The chunk id the templates order ties by: the property, or the element id (null property). */
    private static Object idOf(Node node, String idProperty) {
        return idProperty == null ? node.getElementId() : node.getProperty(idProperty, null);
    }

    /** Cypher's ascending order for the id values that tie (numbers numerically, text by code point). */
    static int compareIds(Object a, Object b) {
        if (a == null || b == null) {
            return a == null ? (b == null ? 0 : 1) : -1; // nulls last, as ORDER BY puts them
        }
        if (a instanceof Number x && b instanceof Number y) {
            return Double.compare(x.doubleValue(), y.doubleValue());
        }
        String x = String.valueOf(a);
        String y = String.valueOf(b);
        return java.util.Arrays.compare(x.codePoints().toArray(), y.codePoints().toArray());
    }

    /** The vector index named {@code indexName}, as the kernel describes it (an IndexDescriptor). */
    private static Object vectorIndex(KernelTransaction ktx, String indexName) throws Throwable {
        Object index = INDEX_FOR_NAME.invoke(ktx.schemaRead(), indexName);
        if (index == null || index.equals(NO_INDEX) || !"VECTOR".equals(String.valueOf(INDEX_TYPE.invoke(index)))) {
            throw new IllegalArgumentException("guidedrag.rankAuto: there is no vector index named '" + indexName
                    + "'; give options.indexName the chunks' vector index (SHOW VECTOR INDEXES)");
        }
        return index;
    }

    /**
     * The query as the index's similarity function takes it, as db.index.vector.queryNodes and
     * SEARCH make it before their seek: a cosine index of provider vector-2.0 or later compares
     * L2-normalised vectors (the norm in double, each component divided by it, then float), so
     * the query is normalised the same way; vector-1.0's cosine and euclidean take the floats
     * as they are. Unnormalised, a query far from unit length changes the graph walk's scores
     * (they are clamped at 0) and so the neighbours found.
     */
    static float[] validQuery(Object index, List<Double> query) throws Throwable {
        Object config = INDEX_CONFIG.invoke(index);
        Object function = CONFIG_GET.invoke(config, "vector.similarity_function");
        Object provider = INDEX_PROVIDER.invoke(index);
        String functionName = function == null ? "" : String.valueOf(AS_OBJECT.invoke(function));
        String providerName = String.valueOf(PROVIDER_NAME.invoke(provider));
        float[] q = new float[query.size()];
        if ("COSINE".equalsIgnoreCase(functionName) && !"vector-1.0".equals(providerName)) {
            double sum = 0.0;
            for (Double x : query) {
                sum += x * x;
            }
            double norm = Math.sqrt(sum);
            for (int i = 0; i < q.length; i++) {
                q[i] = (float) (query.get(i) / norm);
            }
            return q;
        }
        for (int i = 0; i < q.length; i++) {
            q[i] = query.get(i).floatValue();
        }
        return q;
    }

    private static final MethodHandle INDEX_FOR_NAME;
    private static final MethodHandle INDEX_TYPE;
    private static final MethodHandle INDEX_CONFIG;
    private static final MethodHandle CONFIG_GET;
    private static final MethodHandle AS_OBJECT;
    private static final MethodHandle INDEX_PROVIDER;
    private static final MethodHandle PROVIDER_NAME;
    private static final MethodHandle READ_SESSION;
    private static final Object NO_INDEX;
    private static final Class<?> PREDICATE;
    private static final MethodHandle NEAREST;
    private static final MethodHandle SEEK;

    static {
        try {
            ClassLoader loader = SchemaRead.class.getClassLoader();
            Class<?> descriptor = Class.forName("org.neo4j.internal.schema.IndexDescriptor", false, loader);
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            INDEX_FOR_NAME = lookup.findVirtual(SchemaRead.class, "indexGetForName",
                    MethodType.methodType(descriptor, String.class));
            INDEX_TYPE = lookup.unreflect(descriptor.getMethod("getIndexType"));
            java.lang.reflect.Method config = descriptor.getMethod("getIndexConfig");
            INDEX_CONFIG = lookup.unreflect(config);
            CONFIG_GET = lookup.unreflect(config.getReturnType().getMethod("get", String.class));
            AS_OBJECT = lookup.unreflect(Class.forName("org.neo4j.values.storable.Value", false, loader)
                    .getMethod("asObject"));
            java.lang.reflect.Method provider = descriptor.getMethod("getIndexProvider");
            INDEX_PROVIDER = lookup.unreflect(provider);
            PROVIDER_NAME = lookup.unreflect(provider.getReturnType().getMethod("name"));
            READ_SESSION = lookup.findVirtual(Read.class, "indexReadSession",
                    MethodType.methodType(IndexReadSession.class, descriptor));
            NO_INDEX = descriptor.getField("NO_INDEX").get(null);
            PREDICATE = Class.forName("org.neo4j.internal.kernel.api.PropertyIndexQuery", false, loader);
            NEAREST = lookup.unreflect(PREDICATE.getMethod("nearestNeighbors", int.class, float[].class));
            SEEK = lookup.findVirtual(Read.class, "nodeIndexSeek", MethodType.methodType(void.class,
                    QueryContext.class, IndexReadSession.class, NodeValueIndexCursor.class,
                    IndexQueryConstraints.class, PREDICATE.arrayType())).asFixedArity();
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
