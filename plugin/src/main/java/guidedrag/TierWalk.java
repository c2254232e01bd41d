package guidedrag;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.NodeCursor;
import org.neo4j.internal.kernel.api.Read;
import org.neo4j.internal.kernel.api.RelationshipTraversalCursor;
import org.neo4j.internal.kernel.api.TokenRead;
import org.neo4j.internal.kernel.api.security.AccessMode;
import org.neo4j.kernel.api.KernelTransaction;
import org.neo4j.kernel.impl.coreapi.InternalTransaction;
import org.neo4j.procedure.TerminationGuard;
import org.neo4j.storageengine.api.RelationshipSelection;

/**
 * Mentions walked by node id through the kernel's cursors (what Cypher's Expand reads, in the same
 * order), for {@link EntityTiers}. One per function call, closed when it returns (its cursors go
 * back to the transaction's pool then, not at the end of the query).
 *
 * <p>Neighbour lists come from the database's {@link VectorCache} when it has them (read once from
 * the chains, kept until a commit changes the graph's shape); a transaction with uncommitted
 * changes walks the chains itself, as it must see its own writes. Measured on the MuSiQue bare
 * questions inside the server, {@code mentioned} listed a tier in ~100-170 us from the chains.
 *
 * <p>Internal API, like {@link Scorer}'s transaction state: the methods used here have the same
 * signatures in 5.26 and 2026.x (checked with javap), but for {@code NodeCursor.degree}, whose
 * return type changed between them and which is therefore looked up by name ({@link #DEGREE}).
 */
final class TierWalk implements AutoCloseable {

    private static final int NO_TOKEN = -1;

    private final InternalTransaction tx;
    private final TerminationGuard guard;
    private final Read read;
    private final NodeCursor node;
    private final NodeCursor other;
    private final RelationshipTraversalCursor rels;
    private final int chunkLabel;
    private final int entityLabel;
    private final int type;
    private final Direction toChunk; // from an entity to the chunks that mention it
    private final Direction toEntity;
    /** Neighbour lists along the two walks, or null: no cache (or this transaction wrote). */
    private final VectorCache cache;
    private final Map<Long, VectorCache.Adjacent> chunksByEntity;
    private final Map<Long, VectorCache.Adjacent> entitiesByChunk;
    /** One entity's whole near step (itself, then the entities its chunks mention), by its id. */
    private final Map<Long, VectorCache.Adjacent> stepsByEntity;
    /** mentioned()'s "over" verdicts, by a hash of the entity list and bounds (see {@link #keptOver}). */
    private final Map<Long, VectorCache.Adjacent> overByList;
    private int steps;

    private TierWalk(InternalTransaction tx, TerminationGuard guard, VectorCache cache, String chunkLabel,
            String entityLabel, String mentions, String direction) {
        this.tx = tx;
        this.guard = guard;
        KernelTransaction ktx = tx.kernelTransaction();
        this.read = ktx.dataRead();
        TokenRead tokens = ktx.tokenRead();
        this.chunkLabel = tokens.nodeLabel(text(chunkLabel, "chunkLabel"));
        this.entityLabel = entityLabel == null ? NO_TOKEN : tokens.nodeLabel(text(entityLabel, "entityLabel"));
        this.type = tokens.relationshipType(text(mentions, "mentions"));
        if (!"out".equals(direction) && !"in".equals(direction)) {
            throw new IllegalArgumentException("guidedrag tiers: direction must be 'out' or 'in', got "
                    + (direction == null ? "null" : "'" + direction + "'"));
        }
        boolean out = direction.equals("out"); // (chunk)-[:mentions]->(entity)
        this.toChunk = out ? Direction.INCOMING : Direction.OUTGOING;
        this.toEntity = out ? Direction.OUTGOING : Direction.INCOMING;
        this.node = ktx.cursors().allocateNodeCursor(ktx.cursorContext(), ktx.memoryTracker());
        this.other = ktx.cursors().allocateNodeCursor(ktx.cursorContext(), ktx.memoryTracker());
        this.rels = ktx.cursors().allocateRelationshipTraversalCursor(ktx.cursorContext(), ktx.memoryTracker());
        this.cache = cache;
        this.chunksByEntity = cache == null ? null : cache.walks(walkKey(this.chunkLabel, type, toChunk));
        this.entitiesByChunk = cache == null || this.entityLabel == NO_TOKEN ? null
                : cache.walks(walkKey(this.entityLabel, type, toEntity));
        this.stepsByEntity = entitiesByChunk == null ? null
                : cache.walks(walkKey(this.entityLabel, type, toEntity) | STEP_KEY);
        this.overByList = chunksByEntity == null ? null
                : cache.walks(walkKey(this.chunkLabel, type, toChunk) | OVER_KEY);
    }

    /** Marks a near step's key apart from the walks' (their keys end in a direction ordinal). */
    private static final long STEP_KEY = 1L << 62;

    /** {@code entity}'s near step as last kept (every entity found, in order), or null. */
    long[] keptStep(long entity) {
        VectorCache.Adjacent hit = stepsByEntity == null ? null : stepsByEntity.get(entity);
        return hit == null ? null : hit.ids();
    }

    /** Marks the "over" verdicts' key apart from the walks' and the steps'. */
    private static final long OVER_KEY = 1L << 61;

    /** At most this many "over" verdicts are kept: a list is a question's, not the KB's. */
    static final int MAX_OVER = 1 << 16;

    /**
     * Whether mentioned() already found {@code entities} over its bounds, unchanged shape since.
     * A hub's tier (near(x) of a much-mentioned x) is asked again and again and is over every
     * time, and deciding it walks up to {@code listMax} mentions (measured on the synthetic 1M
     * KB: about 0.4 ms of a 3.6 ms tiers read). The list itself is kept beside the verdict and
     * compared, so a hash collision never answers for another list.
     */
    boolean keptOver(long[] entities, long exactMax, long listMax) {
        if (overByList == null) {
            return false;
        }
        long[] key = overKey(entities, exactMax, listMax);
        VectorCache.Adjacent hit = overByList.get(hash(key));
        return hit != null && Arrays.equals(hit.ids(), key);
    }

    /** Keep "over" for {@code entities}, unless the graph's shape changed since {@code epoch}. */
    void keepOver(long[] entities, long exactMax, long listMax, long epoch) {
        if (overByList == null || overByList.size() >= MAX_OVER) {
            return;
        }
        long[] key = overKey(entities, exactMax, listMax);
        cache.putAdjacent(overByList, hash(key), new VectorCache.Adjacent(key, 1), epoch);
    }

    private static long[] overKey(long[] entities, long exactMax, long listMax) {
        long[] key = Arrays.copyOf(entities, entities.length + 2);
        key[entities.length] = exactMax;
        key[entities.length + 1] = listMax;
        return key;
    }

    /** A 64-bit hash of {@code values} (order counts, as it does for the verdict's walk). */
    private static long hash(long[] values) {
        long h = 0x9E3779B97F4A7C15L;
        for (long v : values) {
            h = (h ^ v) * 0xBF58476D1CE4E5B9L;
            h ^= h >>> 31;
        }
        return h;
    }

    /** The shape epoch a step about to be walked starts from (see {@link #keepStep}). */
    long stepEpoch() {
        return cache == null ? -1 : cache.shapeEpoch();
    }

    /** Keep {@code entity}'s whole near step, unless the graph's shape changed since {@code epoch}. */
    void keepStep(long entity, LongSet grown, long epoch) {
        if (stepsByEntity == null) {
            return;
        }
        long[] ids = new long[grown.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = grown.get(i);
        }
        cache.putAdjacent(stepsByEntity, entity, new VectorCache.Adjacent(ids, ids.length), epoch);
    }

    /** One walk's key in the cache: the label reached, the relationship type, the direction. */
    static long walkKey(int label, int type, Direction direction) {
        return ((long) label << 33) | ((long) (type & 0x7fffffff) << 2) | direction.ordinal();
    }

    @Override
    public void close() {
        rels.close();
        other.close();
        node.close();
    }

    /** A walk over {@code mentions}; {@code entityLabel} null when the walk only reaches chunks. */
    static TierWalk open(GraphDatabaseService db, Transaction tx, TerminationGuard guard, String chunkLabel,
            String entityLabel, String mentions, String direction) {
        if (!(tx instanceof InternalTransaction internal)) {
            throw new IllegalStateException("guidedrag tiers: the transaction is a " + tx.getClass().getName()
                    + ", not the kernel's; use walk=cypher (GUIDEDRAG_RANK_PLUGIN=off)");
        }
        boolean cached = Scorer.transactionState(tx) == null && traversesEverything(internal);
        VectorCache cache = cached ? VectorCache.of(db).cache() : null;
        return new TierWalk(internal, guard, cache, chunkLabel, entityLabel, mentions, direction);
    }

    /**
     * Whether this call's reads may traverse every label and relationship type (the mode the
     * kernel applies to the function's own reads). Cached neighbour lists were read by whichever
     * call filled them, so a call whose traversal is restricted (Enterprise roles on a procedure
     * that is not boosted) walks the chains, where the kernel applies the restrictions, and
     * neither reads nor fills the cache. Community runs functions boosted (an overridden mode
     * that traverses everything), so this is always true there and untested by the harness.
     */
    private static boolean traversesEverything(InternalTransaction tx) {
        try {
            AccessMode mode = tx.kernelTransaction().securityContext().mode();
            return mode.allowsTraverseAllLabels() && mode.allowsTraverseAllRelTypes();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    private static String text(String value, String name) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("guidedrag tiers: " + name + " must be a non-empty name, got "
                    + (value == null ? "null" : "''"));
        }
        return value;
    }

    /** The ids of {@code nodes}, each once, in order (nulls are no entity). */
    LongSet ids(List<Node> nodes) {
        LongSet ids = new LongSet();
        for (Node n : nodes == null ? List.<Node>of() : nodes) {
            if (n != null) {
                ids.add(n.getId());
            }
        }
        return ids;
    }

    /** The ids of {@code nodes} as given, duplicates kept (nulls are no entity). */
    long[] idList(List<Node> nodes) {
        if (nodes == null) {
            return new long[0];
        }
        return nodes.stream().filter(n -> n != null).mapToLong(Node::getId).toArray();
    }

    /** Nodes for ids, for Cypher (entities that read nothing until used). */
    List<Node> nodes(LongSet ids) {
        return nodes(ids, ids.size());
    }

    /** Nodes for the first {@code n} of {@code ids}, in their order. */
    List<Node> nodes(LongSet ids, int n) {
        List<Node> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(tx.newNodeEntity(ids.get(i)));
        }
        return out;
    }

    /** Nodes for the first {@code n} of {@code ids}, in their order. */
    List<Node> nodes(long[] ids, int n) {
        List<Node> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(tx.newNodeEntity(ids[i]));
        }
        return out;
    }

    /** Adds the chunks (chunk label) that mention {@code entity}, in chain order. */
    void chunksOf(long entity, LongSet into) {
        addAll(neighboursOf(chunksByEntity, entity, toChunk, chunkLabel, Long.MAX_VALUE), into);
    }

    /** Adds the entities (entity label) that {@code chunk} mentions, in chain order. */
    void entitiesOf(long chunk, LongSet into) {
        addAll(neighboursOf(entitiesByChunk, chunk, toEntity, entityLabel, Long.MAX_VALUE), into);
    }

    /** Each tier's entity ids (null where the tier is listed, not given by its entities). */
    LongSet[] memberSets(List<? extends List<Node>> members) {
        LongSet[] sets = new LongSet[members == null ? 0 : members.size()];
        for (int i = 0; i < sets.length; i++) {
            List<Node> m = members.get(i);
            sets[i] = m == null ? null : ids(m);
        }
        return sets;
    }

    /**
     * The indices of the tiers {@code chunk} mentions an entity of (ascending; null sets skipped):
     * the Cypher {@code EXISTS { (c)-[:mentions]->(e) WHERE e IN members[i] }}, over the chunk's
     * cached entity list rather than a subquery per chunk and tier.
     */
    List<Long> tiersMentioned(long chunk, LongSet[] sets) {
        List<Long> in = new ArrayList<>(2);
        long[] mentioned = null;
        for (int i = 0; i < sets.length; i++) {
            if (sets[i] == null || sets[i].size() == 0) {
                continue;
            }
            if (mentioned == null) {
                mentioned = neighboursOf(entitiesByChunk, chunk, toEntity, entityLabel, Long.MAX_VALUE).ids();
            }
            for (long e : mentioned) {
                if (sets[i].contains(e)) {
                    in.add((long) i);
                    break;
                }
            }
        }
        return in;
    }

    private static void addAll(VectorCache.Adjacent adjacent, LongSet into) {
        for (long id : adjacent.ids()) {
            into.add(id); // a no-op for an id already there
        }
    }

    /**
     * {@code from}'s neighbours along a walk: from {@code walk} (the cache's lists of that walk;
     * null when this call may not use the cache), else read from the chain, whole, and cached;
     * without a cache the read stops once past {@code budget} (see {@link #readChain}).
     */
    private VectorCache.Adjacent neighboursOf(Map<Long, VectorCache.Adjacent> walk, long from,
            Direction direction, int label, long budget) {
        VectorCache.Adjacent hit = walk == null ? null : walk.get(from);
        if (hit != null) {
            return hit;
        }
        if (walk == null) {
            return readChain(from, direction, label, budget);
        }
        long epoch = cache.shapeEpoch();
        VectorCache.Adjacent read = readChain(from, direction, label, Long.MAX_VALUE);
        if (read != NONE) {
            cache.putAdjacent(walk, from, read, epoch);
        }
        return read;
    }

    /**
     * {@code from}'s chain: every relationship of the type and direction counted (whatever is at
     * the other end, as {@code COUNT { }} counts), the {@code label}led neighbours kept, each
     * once, in chain order. Stops once the count is past {@code budget}: the list is then
     * incomplete, and the count only known to be past it. A node that is not there has none.
     */
    private VectorCache.Adjacent readChain(long from, Direction direction, int label, long budget) {
        if (type == NO_TOKEN || !at(from)) {
            return NONE;
        }
        node.relationships(rels, RelationshipSelection.selection(type, direction));
        LongSet found = new LongSet();
        long degree = 0;
        while (rels.next()) {
            tick();
            if (++degree > budget) {
                break;
            }
            long id = rels.otherNodeReference();
            if (label != NO_TOKEN && !found.contains(id) && hasLabel(id, label)) {
                found.add(id);
            }
        }
        long[] ids = new long[found.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = found.get(i);
        }
        return new VectorCache.Adjacent(ids, degree);
    }

    private static final VectorCache.Adjacent NONE = new VectorCache.Adjacent(new long[0], 0);

    /**
     * Adds the chunks (chunk label) that mention {@code entity}, in chain order, and returns its
     * mentions as {@code COUNT { ()-[:mentions]->(e) }} counts them (whatever mentions it). A
     * node that keeps its degrees (a dense one) gives them before its chain is read, and one
     * past {@code budget} is neither read nor cached; any other is counted on the read that lists
     * it (its degree would be that same walk). Past the budget, nothing is added and the count
     * returned is only known to be past it.
     */
    long listMentions(long entity, LongSet into, long budget) {
        if (type == NO_TOKEN) {
            return 0;
        }
        VectorCache.Adjacent known = chunksByEntity == null ? null : chunksByEntity.get(entity);
        if (known == null) {
            if (!at(entity)) {
                return 0;
            }
            if (DEGREE != null && node.supportsFastDegreeLookup()) {
                long degree = degree(RelationshipSelection.selection(type, toChunk));
                if (degree > budget) {
                    return degree;
                }
            }
            known = neighboursOf(chunksByEntity, entity, toChunk, chunkLabel, budget);
        }
        if (known.degree() <= budget) {
            addAll(known, into);
        }
        return known.degree();
    }

    private long degree(RelationshipSelection selection) {
        try {
            return (long) DEGREE.invokeExact(node, selection);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("guidedrag tiers: reading a degree failed", e);
        }
    }

    /**
     * {@code NodeCursor.degree(RelationshipSelection)} as a {@code long}: it returns an {@code int}
     * in 5.26 and a {@code long} in 2026.x, so it is looked up by name once rather than compiled
     * against one of them; null (count on the chain) when neither is there.
     */
    static final MethodHandle DEGREE = degreeHandle();

    private static MethodHandle degreeHandle() {
        MethodType wanted = MethodType.methodType(long.class, NodeCursor.class, RelationshipSelection.class);
        for (Class<?> returned : new Class<?>[] {long.class, int.class}) {
            try {
                return MethodHandles.publicLookup()
                        .findVirtual(NodeCursor.class, "degree",
                                MethodType.methodType(returned, RelationshipSelection.class))
                        .asType(wanted);
            } catch (NoSuchMethodException | IllegalAccessException e) {
                // the other line's signature, or none
            }
        }
        return null;
    }

    /** Distinct chunks that mention {@code entity}, counted up to {@code limit} (a hub's chain
     * is read only that far, and not cached). */
    long chunkCount(long entity, long limit) {
        if (type == NO_TOKEN || chunkLabel == NO_TOKEN || !at(entity)) {
            return 0;
        }
        node.relationships(rels, RelationshipSelection.selection(type, toChunk));
        LongSet seen = new LongSet();
        while (rels.next() && seen.size() < limit) {
            tick();
            long id = rels.otherNodeReference();
            if (!seen.contains(id) && hasLabel(id, chunkLabel)) {
                seen.add(id);
            }
        }
        return seen.size();
    }

    /** Puts the node cursor on {@code id}; false when there is no such node (deleted). */
    private boolean at(long id) {
        read.singleNode(id, node);
        return node.next();
    }

    private void tick() {
        if ((++steps & Scorer.GUARD_EVERY) == 0) {
            guard.check();
        }
    }

    private boolean hasLabel(long id, int label) {
        read.singleNode(id, other);
        return other.next() && other.hasLabel(label);
    }
}
