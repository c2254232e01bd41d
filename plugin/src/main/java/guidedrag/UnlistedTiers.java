package guidedrag;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.TerminationGuard;

/**
 * auto's tiers too large to list, given by their entities (cypher/select_mentioned.cypher): a
 * chunk is in such a tier when it mentions one of its entities. One walk and one id set per tier
 * for the whole call, and each chunk tested once, however many steps ask ({@link RankAuto}'s
 * over-fetch decision, then {@link RankTiers}'s ranking of the same candidates).
 */
final class UnlistedTiers implements AutoCloseable {

    private final TierWalk walk;
    /** Per tier, its entities' ids; null for a listed tier. */
    private final LongSet[] sets;
    private final Map<Node, List<Long>> tested = new HashMap<>();

    private UnlistedTiers(TierWalk walk, LongSet[] sets) {
        this.walk = walk;
        this.sets = sets;
    }

    /**
     * The tiers {@code members} gives by their entities (per tier null, or its entities), walked
     * with the schema of {@code options} (chunkLabel, entityLabel, mentions, direction as for
     * guidedrag.nearStep); null when none is (every tier listed: nothing to walk, no schema needed).
     */
    static UnlistedTiers open(GraphDatabaseService db, Transaction tx, TerminationGuard guard, Object members,
            Map<String, Object> options, int tiers) {
        List<List<Node>> given = RankTiers.unlistedTiers(members, tiers);
        if (given == null || given.stream().allMatch(m -> m == null)) {
            return null;
        }
        TierWalk walk = TierWalk.open(db, tx, guard, RankTiers.stringOption(options, "chunkLabel"),
                RankTiers.stringOption(options, "entityLabel"), RankTiers.stringOption(options, "mentions"),
                RankTiers.stringOption(options, "direction"));
        return new UnlistedTiers(walk, walk.memberSets(given));
    }

    /** Whether tier {@code i} is given by its entities rather than listed. */
    boolean given(int i) {
        return sets[i] != null;
    }

    /** The indices of the unlisted tiers {@code chunk} is in, ascending. */
    List<Long> of(Node chunk) {
        return tested.computeIfAbsent(chunk, c -> walk.tiersMentioned(c.getId(), sets));
    }

    @Override
    public void close() {
        walk.close();
    }
}
