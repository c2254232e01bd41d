package guidedrag;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.event.PropertyEntry;
import org.neo4j.graphdb.event.TransactionData;
import org.neo4j.graphdb.event.TransactionEventListener;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * A compact in-heap copy of the embeddings the rank procedure has read, per database and property.
 *
 * <p>Why: reading a 384-float list property from the record store costs tens of microseconds per
 * node (the array spans some two dozen dynamic records), whichever API reads it; measured, a
 * primitive {@code Node.getProperty} read is no faster than Cypher's. A {@code float[]} in heap is
 * read at memory speed, so the dot product becomes the whole cost.
 *
 * <p>Consistency: a transaction listener drops the entry of every node whose cached property was
 * set or removed, and of every deleted node, after each commit (and rollback). A reader stores
 * what it read only if no such invalidation happened while it was reading (an epoch counter that
 * writers bump <em>before</em> dropping entries), so a value read before a commit can never be
 * stored after that commit's invalidation. Ids reused after a delete are safe for the same reason.
 *
 * <p>Memory: at most {@code guidedrag.rank.cacheBytes} bytes (a JVM system property; default a
 * quarter of the maximum heap). When full, further nodes are read from the store every time.
 */
final class VectorCache implements TransactionEventListener<Object> {

    /** A cached embedding (float32) and its norm. */
    record Vec(float[] values, double norm) {}

    private static final Map<String, VectorCache> BY_DATABASE = new ConcurrentHashMap<>();
    private static final AtomicLong BYTES = new AtomicLong();
    static final long BUDGET = Long.getLong("guidedrag.rank.cacheBytes", Runtime.getRuntime().maxMemory() / 4);

    private final Map<String, Map<Long, Vec>> byProperty = new ConcurrentHashMap<>();
    private final AtomicLong epoch = new AtomicLong();

    private VectorCache() {}

    /**
     * The cache of {@code db}, registering its invalidation listener on first use; null when the
     * database service gives no way to listen for commits (then nothing may be cached).
     */
    static VectorCache of(GraphDatabaseService db) {
        VectorCache existing = BY_DATABASE.get(db.databaseName());
        if (existing != null) {
            return existing;
        }
        if (!(db instanceof GraphDatabaseAPI api)) {
            return null;
        }
        synchronized (BY_DATABASE) {
            existing = BY_DATABASE.get(db.databaseName());
            if (existing != null) {
                return existing;
            }
            DatabaseManagementService dbms;
            try {
                dbms = api.getDependencyResolver().resolveDependency(DatabaseManagementService.class);
            } catch (RuntimeException e) {
                return null;
            }
            VectorCache cache = new VectorCache();
            dbms.registerTransactionEventListener(db.databaseName(), cache);
            BY_DATABASE.put(db.databaseName(), cache);
            return cache;
        }
    }

    long epoch() {
        return epoch.get();
    }

    Vec get(String property, long nodeId) {
        Map<Long, Vec> map = byProperty.get(property);
        return map == null ? null : map.get(nodeId);
    }

    /** Keep {@code vec} unless an invalidation ran since {@code readEpoch} or the budget is spent. */
    void put(String property, long nodeId, Vec vec, long readEpoch) {
        long size = 16L + 4L * vec.values().length + 64L;
        if (BYTES.get() + size > BUDGET || epoch.get() != readEpoch) {
            return;
        }
        Vec old = byProperty.computeIfAbsent(property, p -> new ConcurrentHashMap<>()).put(nodeId, vec);
        if (old == null) {
            BYTES.addAndGet(size);
        }
        if (epoch.get() != readEpoch) { // an invalidation raced the insert: drop what we put
            if (byProperty.get(property).remove(nodeId, vec)) {
                BYTES.addAndGet(-size);
            }
        }
    }

    long entries() {
        long n = 0;
        for (Map<Long, Vec> map : byProperty.values()) {
            n += map.size();
        }
        return n;
    }

    static long bytes() {
        return BYTES.get();
    }

    void clear() {
        epoch.incrementAndGet();
        for (Map<Long, Vec> map : byProperty.values()) {
            for (Vec vec : map.values()) {
                BYTES.addAndGet(-(16L + 4L * vec.values().length + 64L));
            }
            map.clear();
        }
    }

    private void invalidate(TransactionData data) {
        if (data == null || byProperty.isEmpty()) {
            return;
        }
        List<Long> touched = new ArrayList<>();
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
        if (touched.isEmpty()) {
            return;
        }
        epoch.incrementAndGet(); // first: readers that started before now will not store
        for (Map<Long, Vec> map : byProperty.values()) {
            for (Long id : touched) {
                Vec old = map.remove(id);
                if (old != null) {
                    BYTES.addAndGet(-(16L + 4L * old.values().length + 64L));
                }
            }
        }
    }

    @Override
    public Object beforeCommit(TransactionData data, org.neo4j.graphdb.Transaction transaction,
            GraphDatabaseService databaseService) {
        return null;
    }

    @Override
    public void afterCommit(TransactionData data, Object state, GraphDatabaseService databaseService) {
        invalidate(data);
    }

    @Override
    public void afterRollback(TransactionData data, Object state, GraphDatabaseService databaseService) {
        invalidate(data); // a rolled-back writer may have ranked (and cached) its own uncommitted value
    }
}
