package guidedrag;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.event.PropertyEntry;
import org.neo4j.graphdb.event.TransactionData;
import org.neo4j.graphdb.event.TransactionEventListener;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * A compact in-heap copy of the embeddings the rank procedures have read, per running database
 * and property, keyed by element id.
 *
 * <p>Why: reading a 384-float list property from the record store costs tens of microseconds per
 * node (the array spans some two dozen dynamic records), whichever API reads it; measured, a
 * primitive {@code Node.getProperty} read is no faster than Cypher's. A {@code float[]} in heap is
 * read at memory speed, so the dot product becomes the whole cost.
 *
 * <p>Lifetime: one cache per <em>started</em> database, made and discarded by
 * {@link CacheExtensionFactory} (a database extension: started with the database, stopped with
 * it) and found by the database's id (its {@code DatabaseId} UUID), never by its name. A database
 * dropped and recreated, or stopped, restored and started again under the same name, fires no
 * commit events for the change of store; its old cache was stopped with it, and the new one
 * starts empty, so old vectors are never served for the new store's nodes.
 *
 * <p>Consistency: a transaction listener (registered and unregistered by that lifecycle) drops the
 * entry of every node whose cached property was set or removed, and of every deleted node, after
 * each commit (and rollback). A reader stores what it read only if no such invalidation happened
 * while it was reading (an epoch counter that writers bump <em>before</em> dropping entries), so a
 * value read before a commit can never be stored after that commit's invalidation. Element ids
 * reused after a delete are safe for the same reason.
 *
 * <p>Memory: at most {@code guidedrag.rank.cacheBytes} bytes for all databases (a JVM system
 * property; default a quarter of the maximum heap). When full, further nodes are read from the
 * store every time.
 */
final class VectorCache implements TransactionEventListener<Object> {

    /** A cached embedding (float32) and its norm. */
    record Vec(float[] values, double norm) {}

    /** The cache a procedure call may use, or why it has none (a warning for the caller). */
    record Lookup(VectorCache cache, String warning) {}

    /** The caches of the started databases, by database id. */
    private static final Map<UUID, VectorCache> RUNNING = new ConcurrentHashMap<>();
    /** Why a database's lifecycle could not start its cache, by database id (until it stops). */
    private static final Map<UUID, String> FAILED = new ConcurrentHashMap<>();
    private static final AtomicLong BYTES = new AtomicLong();
    static final long BUDGET = Long.getLong("guidedrag.rank.cacheBytes", Runtime.getRuntime().maxMemory() / 4);

    private final UUID databaseId;
    private final Map<String, Map<String, Vec>> byProperty = new ConcurrentHashMap<>();
    private final AtomicLong epoch = new AtomicLong();
    private volatile boolean open = true;

    VectorCache(UUID databaseId) {
        this.databaseId = databaseId;
    }

    /** Make this the cache of its database (the lifecycle's start). */
    void open() {
        FAILED.remove(databaseId);
        VectorCache old = RUNNING.put(databaseId, this);
        if (old != null && old != this) {
            old.close();
        }
    }

    /** Discard this cache (the lifecycle's stop): later look-ups for its database find none. */
    void close() {
        open = false;
        RUNNING.remove(databaseId, this);
        clear();
    }

    /** The lifecycle could not start the cache of {@code databaseId}: say so to every caller. */
    static void failed(UUID databaseId, String why) {
        FAILED.put(databaseId, why);
    }

    /** The lifecycle stopped {@code databaseId}: forget why its cache failed, if it did. */
    static void forget(UUID databaseId) {
        FAILED.remove(databaseId);
    }

    /**
     * The cache of {@code db}'s started database, or a warning saying why there is none (the
     * caller then reads every embedding from the store: slower, still exact).
     */
    static Lookup of(GraphDatabaseService db) {
        UUID id;
        try {
            if (!(db instanceof GraphDatabaseAPI api)) {
                return new Lookup(null, "the embedding cache is off: database `" + db.databaseName()
                        + "` is served by a " + db.getClass().getName() + ", which gives no database id");
            }
            id = api.databaseId().databaseId().uuid();
        } catch (RuntimeException | LinkageError e) {
            return new Lookup(null, "the embedding cache is off: this Neo4j gives no database id (" + e + ")");
        }
        VectorCache cache = RUNNING.get(id);
        if (cache != null) {
            return new Lookup(cache, null);
        }
        String why = FAILED.get(id);
        return new Lookup(null, "the embedding cache is off for database `" + db.databaseName() + "`: "
                + (why != null ? why : "its lifecycle extension (" + CacheExtensionFactory.NAME
                        + ") is not running; check that the plugin jar's META-INF/services entry is loaded")
                + "; embeddings are read from the store (exact, slower)");
    }

    /** Database ids with a running cache (tests read it to see the lifecycle). */
    static Set<UUID> running() {
        return Set.copyOf(RUNNING.keySet());
    }

    long epoch() {
        return epoch.get();
    }

    Vec get(String property, String elementId) {
        Map<String, Vec> map = byProperty.get(property);
        return map == null ? null : map.get(elementId);
    }

    /** Bytes one entry holds: the floats, their array and record, the map node, the key. */
    static long size(String elementId, Vec vec) {
        return 16L + 4L * vec.values().length + 64L + 40L + elementId.length();
    }

    /** Keep {@code vec} unless an invalidation ran since {@code readEpoch}, the budget is spent
     * or the cache was closed. */
    void put(String property, String elementId, Vec vec, long readEpoch) {
        long size = size(elementId, vec);
        if (!open || BYTES.get() + size > BUDGET || epoch.get() != readEpoch) {
            return;
        }
        Map<String, Vec> map = byProperty.computeIfAbsent(property, p -> new ConcurrentHashMap<>());
        Vec old = map.put(elementId, vec);
        BYTES.addAndGet(old == null ? size : size - size(elementId, old));
        if (epoch.get() != readEpoch || !open) { // an invalidation (or close) raced the insert
            if (map.remove(elementId, vec)) {
                BYTES.addAndGet(-size);
            }
        }
    }

    long entries() {
        long n = 0;
        for (Map<String, Vec> map : byProperty.values()) {
            n += map.size();
        }
        return n;
    }

    static long bytes() {
        return BYTES.get();
    }

    void clear() {
        epoch.incrementAndGet();
        for (Map<String, Vec> map : byProperty.values()) {
            for (String key : List.copyOf(map.keySet())) {
                Vec old = map.remove(key);
                if (old != null) {
                    BYTES.addAndGet(-size(key, old));
                }
            }
        }
    }

    /**
     * The element ids whose cached entry a transaction makes stale: nodes with a cached property
     * set or removed, and deleted nodes. Read in {@code beforeCommit}, while the transaction is
     * open and its nodes can still name their element ids.
     */
    private List<String> touched(TransactionData data) {
        List<String> touched = new ArrayList<>();
        if (data == null || byProperty.isEmpty()) {
            return touched;
        }
        for (PropertyEntry<Node> entry : data.assignedNodeProperties()) {
            if (byProperty.containsKey(entry.key())) {
                touched.add(entry.entity().getElementId());
            }
        }
        for (PropertyEntry<Node> entry : data.removedNodeProperties()) {
            if (byProperty.containsKey(entry.key())) {
                touched.add(entry.entity().getElementId());
            }
        }
        for (Node node : data.deletedNodes()) {
            touched.add(node.getElementId());
        }
        return touched;
    }

    /** Drop {@code touched} (the state beforeCommit left); without it, drop everything. */
    private void invalidate(Object state) {
        if (!(state instanceof List<?> touched)) {
            if (!byProperty.isEmpty()) {
                clear(); // beforeCommit did not run or failed: nothing cached may outlive the commit
            }
            return;
        }
        if (touched.isEmpty()) {
            return;
        }
        epoch.incrementAndGet(); // first: readers that started before now will not store
        for (Map<String, Vec> map : byProperty.values()) {
            for (Object id : touched) {
                Vec old = map.remove(id);
                if (old != null) {
                    BYTES.addAndGet(-size((String) id, old));
                }
            }
        }
    }

    @Override
    public Object beforeCommit(TransactionData data, org.neo4j.graphdb.Transaction transaction,
            GraphDatabaseService databaseService) {
        return touched(data);
    }

    @Override
    public void afterCommit(TransactionData data, Object state, GraphDatabaseService databaseService) {
        invalidate(state);
    }

    @Override
    public void afterRollback(TransactionData data, Object state, GraphDatabaseService databaseService) {
        // Nothing committed changed. A writer never caches (Scorer skips the cache in a transaction
        // with data changes); dropping what it touched anyway costs little and guards that rule.
        if (state instanceof List<?>) {
            invalidate(state);
        }
    }
}
