package guidedrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * guidedrag.rankTiers against {@link Reference#boostedTop}: ordered by score + boost DESC, id and
 * cut at k, its candidates give the boosted top k over every node, whatever the number of tiers.
 */
class RankTiersTest {

    private static final String RANK_TIERS = "UNWIND $tiers AS ids "
            + "CALL (ids) { MATCH (c:Chunk) WHERE c.id IN ids RETURN collect(c) AS tier } "
            + "WITH collect(tier) AS tiers "
            + "CALL (tiers) { MATCH (c:Chunk) WHERE c.id IN $candidates RETURN collect(c) AS candidates } "
            + "CALL guidedrag.rankTiers(tiers, $weights, candidates, 'embedding', $q, $k, "
            + "  {exactMax: $exactMax, uK: $k}) YIELD node, score, boost, best, memberOf, warning "
            + "RETURN node.id AS id, score, boost, best, memberOf, warning "
            + "ORDER BY score + boost DESC, id LIMIT $k";

    private static GraphDatabaseService db;

    @BeforeAll
    static void start() {
        db = Harness.shared();
    }

    @BeforeEach
    void empty() {
        Harness.clear(db);
    }

    private static Map<String, double[]> chunks(Random rng, int n, int dim) {
        Map<String, double[]> vectors = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            vectors.put(String.format("c%03d", i), Reference.randomVector(rng, dim));
        }
        Harness.write(db, vectors);
        return vectors;
    }

    /** Random tiers (sizes 1..maxSize, overlapping) over the chunk ids, strongest first. */
    private static List<List<String>> tiers(Random rng, List<String> ids, int count, int maxSize) {
        List<List<String>> tiers = new ArrayList<>();
        for (int t = 0; t < count; t++) {
            List<String> tier = new ArrayList<>();
            int size = 1 + rng.nextInt(maxSize);
            for (int i = 0; i < size; i++) {
                tier.add(ids.get(rng.nextInt(ids.size())));
            }
            tiers.add(tier);
        }
        return tiers;
    }

    private static List<Double> weights(int count) {
        List<Double> weights = new ArrayList<>();
        for (int t = 0; t < count; t++) {
            weights.add(0.3 / (1 + t)); // decreasing, strongest first, as the steering sends them
        }
        return weights;
    }

    /** Every k and exactMax: the same rows, scores, best tiers and memberships as the reference. */
    private static void assertLikeTheReference(Map<String, double[]> vectors, List<List<String>> tiers,
            List<Double> weights, double[] q) {
        List<String> ids = new ArrayList<>(vectors.keySet());
        for (long exactMax : new long[] {1_000_000, 3}) { // 3: large tiers taken from the candidates
            for (int k : new int[] {1, 4, 10}) {
                Map<String, Object> params = new HashMap<>();
                params.put("tiers", tiers);
                params.put("weights", weights);
                params.put("candidates", ids); // every chunk: the exactMax fallback loses nothing
                params.put("q", Harness.list(q));
                params.put("k", (long) k);
                params.put("exactMax", exactMax);
                List<Map<String, Object>> rows = Harness.query(db, RANK_TIERS, params);
                List<Reference.Row> want = Reference.boostedTop(vectors, tiers, weights, q, k);
                assertEquals(want.stream().map(Reference.Row::id).toList(),
                        rows.stream().map(r -> r.get("id")).toList(), "k=" + k + " exactMax=" + exactMax);
                for (int i = 0; i < rows.size(); i++) {
                    Map<String, Object> row = rows.get(i);
                    String id = (String) row.get("id");
                    assertEquals(want.get(i).score(), (Double) row.get("score") + (Double) row.get("boost"), 1e-12);
                    assertEquals(Reference.score(vectors.get(id), q), (Double) row.get("score"), 1e-12);
                    Integer best = Reference.bestTier(tiers, id);
                    assertEquals(best == null ? null : (long) best, row.get("best"));
                    assertEquals(Reference.memberOf(tiers, id), row.get("memberOf"));
                    assertNull(row.get("warning"));
                }
            }
        }
    }

    @Test
    void aFewOverlappingTiersGiveTheBoostedTopKOverEveryChunk() {
        Random rng = new Random(21);
        Map<String, double[]> vectors = chunks(rng, 40, 16);
        List<String> ids = new ArrayList<>(vectors.keySet());
        List<List<String>> tiers = List.of(ids.subList(0, 2), ids.subList(5, 25), ids.subList(20, 40));
        List<Double> weights = List.of(0.3, 0.05, 0.02);
        for (int seed = 0; seed < 4; seed++) {
            assertLikeTheReference(vectors, tiers, weights, Reference.randomVector(new Random(seed), 16));
        }
    }

    @Test
    void sixtyFourTiersAndMoreRankLikeTheReference() {
        Random rng = new Random(64);
        Map<String, double[]> vectors = chunks(rng, 120, 8);
        List<String> ids = new ArrayList<>(vectors.keySet());
        for (int count : new int[] {63, 64, 65, 200, 2_000}) { // 2,000: the most GUIDEDRAG_MAX_TERMS allows
            List<List<String>> tiers = tiers(rng, ids, count, 6);
            assertLikeTheReference(vectors, tiers, weights(count), Reference.randomVector(rng, 8));
        }
    }

    @Test
    void aNodeInManyTiersListsThemAllAndTakesTheFirst() {
        Random rng = new Random(5);
        Map<String, double[]> vectors = chunks(rng, 10, 4);
        List<String> ids = new ArrayList<>(vectors.keySet());
        List<List<String>> tiers = new ArrayList<>();
        for (int t = 0; t < 100; t++) {
            tiers.add(t % 7 == 3 ? List.of(ids.get(0), ids.get(0)) : List.of(ids.get(1 + t % 9)));
        }
        assertLikeTheReference(vectors, tiers, weights(100), Reference.randomVector(rng, 4));
    }

    @Test
    void noTiersNoCandidatesAndKZeroGiveNoRowsOrOnlyU() {
        Random rng = new Random(8);
        Map<String, double[]> vectors = chunks(rng, 12, 4);
        assertLikeTheReference(vectors, List.of(), List.of(), Reference.randomVector(rng, 4));
        List<Map<String, Object>> rows = Harness.query(db, "MATCH (c:Chunk) WITH collect(c) AS cs "
                + "CALL guidedrag.rankTiers([cs], [0.1], cs, 'embedding', [1.0, 0.0, 0.0, 0.0], 0) YIELD node "
                + "RETURN node", Map.of());
        assertTrue(rows.isEmpty());
        rows = Harness.query(db, "CALL guidedrag.rankTiers([[]], [0.1], [], 'embedding', [1.0, 0.0, 0.0, 0.0], 3) "
                + "YIELD node RETURN node", Map.of());
        assertTrue(rows.isEmpty());
    }

    @Test
    void badArgumentsNameTheFix() {
        Harness.write(db, Map.of("a", new double[] {1, 0}, "b", new double[] {0, 1}));
        String call = "MATCH (c:Chunk) WITH collect(c) AS cs "
                + "CALL guidedrag.rankTiers(TIERS, $weights, cs, 'embedding', $q, 2, $options) YIELD node RETURN node";
        Object[][] cases = {
            {"[cs, cs]", List.of(0.1), List.of(1.0, 0.0), Map.of(), "2 tiers but 1 weights; give one weight per tier"},
            {"['x']", List.of(0.1), List.of(1.0, 0.0), Map.of(), "tier 0 is a String, not a list of nodes"},
            {"[cs]", List.of(-0.1), List.of(1.0, 0.0), Map.of(), "every weight must be a finite number >= 0"},
            {"[cs]", List.of(0.1), List.of(1.0, 0.0), Map.of("exactMax", "many"), "option exactMax must be an integer"},
            {"[cs]", List.of(0.1), List.of(1.0, 0.0), Map.of("uK", -1), "must be >= 0"},
            {"[cs]", List.of(0.1), List.of(Double.NaN, 0.0), Map.of(), "queryVector holds NaN at 0; pass finite floats"},
        };
        for (Object[] c : cases) {
            Map<String, Object> params = Map.of("weights", c[1], "q", c[2], "options", c[3]);
            QueryExecutionException e = assertThrows(QueryExecutionException.class,
                    () -> Harness.query(db, call.replace("TIERS", (String) c[0]), params));
            assertTrue(e.getMessage().contains((String) c[4]), e.getMessage());
        }
    }
}
