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
 * and property, keyed by node id.
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
 * value read before a commit can never be stored after that commit's invalidation. Node ids
 * reused after a delete are safe for the same reason.
 *
 * <p>It also holds the tier walks' neighbour lists ({@link Adjacent}: an entity's chunks, a chunk's
 * entities), which {@link TierWalk} would otherwise read from the relationship chains and label
 * records on every call. Any commit that creates or deletes a relationship, deletes a node or
 * adds or removes a label drops all of them (writes are rare beside reads in retrieval; a finer
 * rule would have to know every walk's schema).
 *
 * <p>Memory: at most {@code guidedrag.rank.cacheBytes} bytes for all databases (a JVM system
 * property; default a quarter of the maximum heap). When full, further nodes are read from the
 * store every time.
 */
final class VectorCache implements TransactionEventListener<Object> {

    /** What the cache holds, by the bytes it counts against the budget. */
    interface Held {
        /** Bytes one entry holds: the payload's array and record, the map node, the key. */
        long bytes();
    }

    /** A cached embedding (float32) and its norm. */
    record Vec(float[] values, double norm) implements Held {
        @Override
        public long bytes() {
            return 16L + 4L * values.length + 64L + 40L + 16L;
        }
    }

    /**
     * A node's neighbours along one walk (chain order, each once, only those with the walk's
     * label) and how many relationships of the walk's type and direction it has, whatever is at
     * their other end (what {@code COUNT { }} counts).
     */
    record Adjacent(long[] ids, long degree) implements Held {
        @Override
        public long bytes() {
            return 16L + 8L * ids.length + 32L + 40L + 16L;
        }
    }

    /** The cache a procedure call may use, or why it has none (a warning for the caller). */
    record Lookup(VectorCache cache, String warning) {}

    /** The caches of the started databases, by database id. */
    private static final Map<UUID, VectorCache> RUNNING = new ConcurrentHashMap<>();
    /** Why a database's lifecycle could not start its cache, by database id (until it stops). */
    private static final Map<UUID, String> FAILED = new ConcurrentHashMap<>();
    private static final AtomicLong BYTES = new AtomicLong();
    static final long BUDGET = Long.getLong("guidedrag.rank.cacheBytes", Runtime.getRuntime().maxMemory() / 4);

    private final UUID databaseId;
    private final Map<String, Map<Long, Vec>> byProperty = new ConcurrentHashMap<>();
    private final AtomicLong epoch = new AtomicLong();
    /** Neighbour lists by walk ({@link TierWalk#walkKey}), then node id. */
    private final Map<Long, Map<Long, Adjacent>> byWalk = new ConcurrentHashMap<>();
    /** Bumped before neighbour lists are dropped: a walk read across it is not stored. */
    private final AtomicLong shapeEpoch = new AtomicLong();
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

    /**
     * The cached embeddings of {@code property} by node id, for a {@link Scorer} to read for the
     * whole call (one map look-up per call, not per node). Keys are node ids, not element ids:
     * an element id is a string built on every call and hashed on every look-up, which cost as
     * much as the dot product it serves (measured with JFR on the MuSiQue questions).
     */
    Map<Long, Vec> entries(String property) {
        return byProperty.computeIfAbsent(property, p -> new ConcurrentHashMap<>());
    }

    Vec get(String property, long id) {
        Map<Long, Vec> map = byProperty.get(property);
        return map == null ? null : map.get(id);
    }

    /** The neighbour lists of one walk by node id, for a {@link TierWalk} to read for its call. */
    Map<Long, Adjacent> walks(long walkKey) {
        return byWalk.computeIfAbsent(walkKey, w -> new ConcurrentHashMap<>());
    }

    long shapeEpoch() {
        return shapeEpoch.get();
    }

    /** Keep {@code adjacent} unless the graph's shape changed since {@code readEpoch}, the
     * budget is spent or the cache was closed (as {@link #put} for embeddings). */
    void putAdjacent(Map<Long, Adjacent> walk, long id, Adjacent adjacent, long readEpoch) {
        keep(walk, id, adjacent, shapeEpoch, readEpoch);
    }

    /** Drop every neighbour list (the graph's shape changed). */
    private void clearWalks() {
        shapeEpoch.incrementAndGet(); // first: walks read before now will not be stored
        byWalk.values().forEach(VectorCache::dropAll);
    }

    /** Keep {@code vec} unless an invalidation ran since {@code readEpoch}, the budget is spent
     * or the cache was closed. */
    void put(String property, long id, Vec vec, long readEpoch) {
        keep(entries(property), id, vec, epoch, readEpoch);
    }

    /**
     * Put {@code value} in {@code map} unless {@code invalidations} (the counter that writers bump
     * before dropping entries of this kind) moved since {@code readEpoch}, the budget is spent or
     * the cache was closed; taken out again if an invalidation (or close) raced the insert.
     */
    private <V extends Held> void keep(Map<Long, V> map, long id, V value, AtomicLong invalidations,
            long readEpoch) {
        long size = value.bytes();
        if (!open || BYTES.get() + size > BUDGET || invalidations.get() != readEpoch) {
            return;
        }
        V old = map.put(id, value);
        BYTES.addAndGet(old == null ? size : size - old.bytes());
        if (invalidations.get() != readEpoch || !open) {
            if (map.remove(id, value)) {
                BYTES.addAndGet(-size);
            }
        }
    }

    /** Drop {@code id}'s entry from {@code map}, if any, and its bytes from the count. */
    private static <V extends Held> void drop(Map<Long, V> map, Long id) {
        V old = map.remove(id);
        if (old != null) {
            BYTES.addAndGet(-old.bytes());
        }
    }

    private static <V extends Held> void dropAll(Map<Long, V> map) {
        for (Long key : List.copyOf(map.keySet())) {
            drop(map, key);
        }
    }

    long entries() {
        long n = 0;
        for (Map<Long, Vec> map : byProperty.values()) {
            n += map.size();
        }
        return n;
    }

    /** Entries of every walk map: neighbour lists, near steps, "over" verdicts (tests read it). */
    long walkEntries() {
        long n = 0;
        for (Map<Long, Adjacent> map : byWalk.values()) {
            n += map.size();
        }
        return n;
    }

    static long bytes() {
        return BYTES.get();
    }

    void clear() {
        clearWalks();
        epoch.incrementAndGet();
        byProperty.values().forEach(VectorCache::dropAll);
    }

    /**
     * What a commit makes stale: the embeddings of {@code nodes} (a cached property set or
     * removed, or the node deleted), and every neighbour list when {@code shape} (a relationship
     * created or deleted, a node deleted, a label added or removed).
     */
    private record Stale(List<Long> nodes, boolean shape) {}

    /** Read in {@code beforeCommit}, while the transaction is open. */
    private Stale stale(TransactionData data) {
        List<Long> touched = new ArrayList<>();
        if (data == null) {
            return new Stale(touched, false);
        }
        boolean shape = data.createdRelationships().iterator().hasNext()
                || data.deletedRelationships().iterator().hasNext()
                || data.deletedNodes().iterator().hasNext()
                || data.assignedLabels().iterator().hasNext()
                || data.removedLabels().iterator().hasNext();
        if (byProperty.isEmpty()) {
            return new Stale(touched, shape);
        }
        for (PropertyEntry<Node> entry : data.assignedNodeProperties()) {
            if (byProperty.containsKey(entry.key())) {
                touched.add(entry.entity().getId());
            }
        }
        for (PropertyEntry<Node> entry : data.removedNodeProperties()) {
            if (byProperty.containsKey(entry.key())) {
                touched.add(entry.entity().getId());
            }
        }
        for (Node node : data.deletedNodes()) {
            touched.add(node.getId());
        }
        return new Stale(touched, shape);
    }

    /** Drop what {@code state} (what beforeCommit left) names; without it, drop everything. */
    private void invalidate(Object state) {
        if (!(state instanceof Stale stale)) {
            clear(); // beforeCommit did not run or failed: nothing cached may outlive the commit
            return;
        }
        if (stale.shape()) {
            clearWalks();
        }
        List<Long> touched = stale.nodes();
        if (touched.isEmpty()) {
            return;
        }
        epoch.incrementAndGet(); // first: readers that started before now will not store
        for (Map<Long, Vec> map : byProperty.values()) {
            for (Long id : touched) {
                drop(map, id);
            }
        }
    }

    @Override
    public Object beforeCommit(TransactionData data, org.neo4j.graphdb.Transaction transaction,
            GraphDatabaseService databaseService) {
        return stale(data);
    }

    @Override
    public void afterCommit(TransactionData data, Object state, GraphDatabaseService databaseService) {
        invalidate(state);
    }

    @Override
    public void afterRollback(TransactionData data, Object state, GraphDatabaseService databaseService) {
        // Nothing committed changed. A writer never caches (Scorer skips the cache in a transaction
        // with data changes); dropping what it touched anyway costs little and guards that rule.
        if (state instanceof Stale) {
            invalidate(state);
        }
    }
}
