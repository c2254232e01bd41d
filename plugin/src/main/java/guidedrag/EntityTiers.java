package guidedrag;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.TerminationGuard;
import org.neo4j.procedure.UserFunction;

/**
 * The two walks of {@code auto}'s entity tiers, as functions the compiled tiers call in place of
 * their Cypher (cypher/select_near.cypher and cypher/select_mentioned.cypher, variant
 * {@code walk=plugin}).
 *
 * <p>Why: a tier of a hub entity ("India", "Germany") reaches a large part of the KB, and in
 * Cypher every mention on the way is a row through the interpreted runtime (~0.5 µs each,
 * measured: near("India") on MuSiQue is 2,800 rows, 1.2 ms of a 3.2 ms query). Here the same
 * walk reads the relationship chains through the kernel's cursors into primitive id sets.
 *
 * <p>Both return what their Cypher returns, in the same order (the order only matters where a cap
 * cuts a list): {@code collect(DISTINCT ...)} of the same expansions. The schema comes as plain
 * string arguments (Browser cannot set a map parameter from a script's {@code :param} line).
 */
public class EntityTiers {

    @Context
    public GraphDatabaseService db;

    @Context
    public Transaction tx;

    @Context
    public TerminationGuard guard;

    @UserFunction(name = "guidedrag.nearStep")
    @Description("guidedrag.nearStep(entities, cap, chunkLabel, entityLabel, mentions, direction) :: MAP "
            + "{entities, truncated} - one step of near(): the entities, then every entity mentioned by a chunk "
            + "that mentions one of them (first seen first), the first `cap` kept; truncated when more were "
            + "found. direction: 'out' = (chunk)-[:mentions]->(entity), 'in' = (entity)-[:mentions]->(chunk).")
    public Map<String, Object> nearStep(
            @Name("entities") List<Node> entities,
            @Name("cap") long cap,
            @Name("chunkLabel") String chunkLabel,
            @Name("entityLabel") String entityLabel,
            @Name("mentions") String mentions,
            @Name("direction") String direction) {
        try (TierWalk walk = TierWalk.open(db, tx, guard, chunkLabel, entityLabel, mentions, direction)) {
            LongSet ents = walk.ids(entities);
            int keep = (int) Math.max(0, Math.min(cap, Integer.MAX_VALUE));
            // One entity's step (auto's near(x)) is a function of the graph and x, not of the
            // question: kept with the neighbour lists, dropped with them when the shape changes.
            // Kept, it is already the walk's answer (deduplicated, first seen first): its first
            // `cap` ids are read as they are, no set built again (at 1M chunks a step holds a
            // thousand entities at the median, ten thousand at the cap).
            boolean single = ents.size() == 1; // asked before the walk grows ents in place
            long[] kept = single ? walk.keptStep(ents.get(0)) : null;
            if (kept != null) {
                return step(walk.nodes(kept, Math.min(keep, kept.length)), kept.length > cap);
            }
            long epoch = walk.stepEpoch();
            LongSet chunks = new LongSet();
            for (int i = 0; i < ents.size(); i++) {
                walk.chunksOf(ents.get(i), chunks);
            }
            LongSet grown = ents;
            for (int i = 0; i < chunks.size(); i++) {
                walk.entitiesOf(chunks.get(i), grown);
            }
            if (single) {
                walk.keepStep(grown.get(0), grown, epoch);
            }
            return step(walk.nodes(grown, Math.min(keep, grown.size())), grown.size() > cap);
        }
    }

    /** nearStep()'s answer: {entities, truncated}. */
    private static Map<String, Object> step(List<Node> entities, boolean truncated) {
        Map<String, Object> out = new HashMap<>();
        out.put("entities", entities);
        out.put("truncated", truncated);
        return out;
    }

    @UserFunction(name = "guidedrag.mentioned")
    @Description("guidedrag.mentioned(entities, exactMax, listMax, chunkLabel, mentions, direction) :: MAP "
            + "{chunks, over} - the chunks mentioning any of the entities, or none and over = true when listing "
            + "does not pay off: their mentions add up to more than listMax, or the most mentioned one is in "
            + "more than exactMax chunks (cypher/select_mentioned.cypher). direction as for guidedrag.nearStep.")
    public Map<String, Object> mentioned(
            @Name("entities") List<Node> entities,
            @Name("exactMax") long exactMax,
            @Name("listMax") long listMax,
            @Name("chunkLabel") String chunkLabel,
            @Name("mentions") String mentions,
            @Name("direction") String direction) {
        try (TierWalk walk = TierWalk.open(db, tx, guard, chunkLabel, null, mentions, direction)) {
            long[] ents = walk.idList(entities); // as given: Cypher sums the degrees of duplicates too
            if (walk.keptOver(ents, exactMax, listMax)) {
                return listing(List.of(), true);
            }
            long epoch = walk.stepEpoch();
            // One pass: each entity's mentions are counted as its chunks are listed (a dense node's
            // from the degree store first, so a hub past the bound is not walked). Past listMax
            // mentions in all it is over, as a sum past the bound is past it; the chunks found
            // until then are dropped.
            LongSet found = new LongSet();
            long counted = 0;
            long topDegree = -1;
            long top = -1;
            for (long e : ents) {
                long degree = walk.listMentions(e, found, listMax - counted);
                counted += degree;
                if (counted > listMax) {
                    break;
                }
                if (degree > topDegree) { // the first of the most mentioned, as ORDER BY degree DESC keeps it
                    topDegree = degree;
                    top = e;
                }
            }
            boolean over = counted > listMax
                    || (top >= 0 && topDegree > exactMax && walk.chunkCount(top, exactMax + 1) > exactMax);
            if (over) {
                walk.keepOver(ents, exactMax, listMax, epoch);
            }
            return listing(over ? List.of() : walk.nodes(found), over);
        }
    }

    /** mentioned()'s answer: {chunks, over}. */
    private static Map<String, Object> listing(List<Node> chunks, boolean over) {
        Map<String, Object> out = new HashMap<>();
        out.put("chunks", chunks);
        out.put("over", over);
        return out;
    }
}
