package guidedrag;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;

import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.NodeCursor;
import org.neo4j.internal.kernel.api.Read;
import org.neo4j.internal.kernel.api.RelationshipTraversalCursor;
import org.neo4j.internal.kernel.api.TokenRead;
import org.neo4j.kernel.api.KernelTransaction;
import org.neo4j.kernel.impl.coreapi.InternalTransaction;
import org.neo4j.procedure.TerminationGuard;
import org.neo4j.storageengine.api.RelationshipSelection;

/**
 * Mentions walked by node id through the kernel's cursors (what Cypher's Expand reads, in the same
 * order), for {@link EntityTiers}. One per function call, closed when it returns (its cursors go
 * back to the transaction's pool then, not at the end of the query).
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
    private int steps;

    private TierWalk(InternalTransaction tx, TerminationGuard guard, String chunkLabel, String entityLabel,
            String mentions, String direction) {
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
    }

    @Override
    public void close() {
        rels.close();
        other.close();
        node.close();
    }

    /** A walk over {@code mentions}; {@code entityLabel} null when the walk only reaches chunks. */
    static TierWalk open(Transaction tx, TerminationGuard guard, String chunkLabel, String entityLabel,
            String mentions, String direction) {
        if (!(tx instanceof InternalTransaction internal)) {
            throw new IllegalStateException("guidedrag tiers: the transaction is a " + tx.getClass().getName()
                    + ", not the kernel's; use walk=cypher (GUIDEDRAG_RANK_PLUGIN=off)");
        }
        return new TierWalk(internal, guard, chunkLabel, entityLabel, mentions, direction);
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
        List<Node> out = new ArrayList<>(ids.size());
        for (int i = 0; i < ids.size(); i++) {
            out.add(tx.newNodeEntity(ids.get(i)));
        }
        return out;
    }

    /** Adds the chunks (chunk label) that mention {@code entity}, in chain order. */
    void chunksOf(long entity, LongSet into) {
        neighbours(entity, toChunk, chunkLabel, into, Long.MAX_VALUE);
    }

    /** Adds the entities (entity label) that {@code chunk} mentions, in chain order. */
    void entitiesOf(long chunk, LongSet into) {
        neighbours(chunk, toEntity, entityLabel, into, Long.MAX_VALUE);
    }

    /**
     * {@code COUNT { ()-[:mentions]->(e) }}: every mention of the entity, whatever mentions it;
     * from the node's degree store where the kernel gives it, else counted on the chain.
     */
    long mentionDegree(long entity) {
        if (type == NO_TOKEN || !at(entity)) {
            return 0;
        }
        RelationshipSelection selection = RelationshipSelection.selection(type, toChunk);
        if (DEGREE != null) {
            try {
                return (long) DEGREE.invokeExact(node, selection);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("guidedrag tiers: reading a degree failed", e);
            }
        }
        node.relationships(rels, selection);
        long degree = 0;
        while (rels.next()) {
            tick();
            degree++;
        }
        return degree;
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

    /** Distinct chunks that mention {@code entity}, counted up to {@code limit}. */
    long chunkCount(long entity, long limit) {
        LongSet seen = new LongSet();
        neighbours(entity, toChunk, chunkLabel, seen, limit);
        return seen.size();
    }

    /** Adds the {@code label} nodes at the other end of {@code from}'s mentions, in chain order,
     * until {@code into} holds {@code limit}. */
    private void neighbours(long from, Direction direction, int label, LongSet into, long limit) {
        if (type == NO_TOKEN || label == NO_TOKEN) {
            return;
        }
        if (!at(from)) {
            return;
        }
        node.relationships(rels, RelationshipSelection.selection(type, direction));
        while (rels.next() && into.size() < limit) {
            tick();
            long id = rels.otherNodeReference();
            if (!into.contains(id) && hasLabel(id, label)) {
                into.add(id);
            }
        }
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
