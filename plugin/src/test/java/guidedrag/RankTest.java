package guidedrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;

/** guidedrag.rank in a real in-process Neo4j, against {@link Reference}'s cosine in doubles. */
class RankTest {

    private static final String RANK = "MATCH (c:Chunk) WITH collect(c) AS cs "
            + "CALL guidedrag.rank(cs, 'embedding', $q, $k, $options) YIELD node, score, warning "
            + "RETURN node.id AS id, score, warning ORDER BY score DESC, id";

    private static GraphDatabaseService db;

    @BeforeAll
    static void start() {
        db = Harness.shared();
    }

    @BeforeEach
    void empty() {
        Harness.clear(db);
    }

    private static List<Reference.Row> rank(double[] q, long k, Map<String, Object> options) {
        List<Reference.Row> rows = new ArrayList<>();
        for (Map<String, Object> row : Harness.query(db, RANK, Map.of("q", Harness.list(q), "k", k, "options", options))) {
            assertNull(row.get("warning"), "the cache runs in the harness");
            rows.add(new Reference.Row((String) row.get("id"), (Double) row.get("score")));
        }
        return rows;
    }

    private static void assertSameRows(List<Reference.Row> want, List<Reference.Row> got) {
        assertEquals(want.stream().map(Reference.Row::id).toList(), got.stream().map(Reference.Row::id).toList());
        for (int i = 0; i < want.size(); i++) {
            assertEquals(want.get(i).score(), got.get(i).score(), 1e-12, "score of " + want.get(i).id());
        }
    }

    @Test
    void randomVectorsRankLikeTheReferenceFromTheStoreAndFromTheCache() {
        Random rng = new Random(7);
        for (int dim : new int[] {3, 16, 384}) {
            Harness.clear(db);
            Map<String, double[]> vectors = new LinkedHashMap<>();
            for (int i = 0; i < 150; i++) {
                vectors.put(String.format("c%03d", i), Reference.randomVector(rng, dim));
            }
            vectors.put("none", null); // no embedding: skipped
            Harness.write(db, vectors);
            for (int trial = 0; trial < 4; trial++) {
                double[] q = Reference.randomVector(rng, dim);
                for (int k : new int[] {1, 5, 40, 150}) {
                    List<Reference.Row> want = Reference.topWithTies(vectors, q, k);
                    assertSameRows(want, rank(q, k, Map.of("cache", false)));
                    assertSameRows(want, rank(q, k, Map.of())); // fills the cache
                    assertSameRows(want, rank(q, k, Map.of())); // reads it
                }
            }
        }
    }

    @Test
    void float32EmbeddingsScoreTheSameBitsFromTheStoreAndFromTheCache() {
        // What embedding models give: float32 values, stored as doubles. The store path (first
        // call after a start) and the cache path, one node at a time or two at once, must agree
        // to the last bit, or a ranking would depend on what was read before it.
        Random rng = new Random(17);
        Harness.clear(db);
        Map<String, double[]> vectors = new LinkedHashMap<>();
        for (int i = 0; i < 41; i++) { // odd: the batch's last node is scored alone
            double[] v = Reference.randomVector(rng, 384);
            for (int d = 0; d < v.length; d++) {
                v[d] = (float) v[d];
            }
            vectors.put(String.format("f%02d", i), v);
        }
        Harness.write(db, vectors);
        double[] q = Reference.randomVector(rng, 384);
        List<Reference.Row> fromStore = rank(q, 41, Map.of("cache", false));
        List<Reference.Row> filling = rank(q, 41, Map.of());
        List<Reference.Row> cached = rank(q, 41, Map.of());
        assertEquals(41, fromStore.size());
        for (int i = 0; i < fromStore.size(); i++) {
            assertEquals(fromStore.get(i), filling.get(i));
            assertEquals(fromStore.get(i), cached.get(i));
        }
        assertSameRows(Reference.topWithTies(vectors, q, 41), cached);
    }

    @Test
    void tiesWithTheKthScoreAreKeptSoTheIdOrderCutsLikeCypher() {
        Random rng = new Random(3);
        double[] q = Reference.randomVector(rng, 8);
        double[] near = q.clone();
        near[0] = (float) (near[0] + 0.5); // float32 values: the cached copy is exact
        Map<String, double[]> vectors = new LinkedHashMap<>();
        for (String id : new String[] {"t5", "t3", "t9", "t1"}) {
            vectors.put(id, near); // four identical vectors tie for first
        }
        for (int i = 0; i < 6; i++) {
            vectors.put("u" + i, Reference.randomVector(rng, 8));
        }
        Harness.write(db, vectors);
        List<Reference.Row> rows = rank(q, 2, Map.of());
        assertEquals(List.of("t1", "t3", "t5", "t9"), rows.stream().map(Reference.Row::id).toList());
        assertSameRows(Reference.topWithTies(vectors, q, 2), rows);
        // a tie at the k-th place only: k = 5 keeps the 4 ties and the fifth; k = 4 the ties alone
        assertEquals(4, rank(q, 4, Map.of()).size());
        assertSameRows(Reference.topWithTies(vectors, q, 5), rank(q, 5, Map.of()));
    }

    @Test
    void kBeyondTheNodesEmptyListsAndZeroQueriesGiveWhatCypherGives() {
        Random rng = new Random(5);
        Map<String, double[]> vectors = new LinkedHashMap<>();
        for (int i = 0; i < 7; i++) {
            vectors.put("n" + i, Reference.randomVector(rng, 4));
        }
        vectors.put("zero", new double[] {0, 0, 0, 0}); // cosine undefined: dropped, as Cypher's null
        Harness.write(db, vectors);
        double[] q = Reference.randomVector(rng, 4);
        List<Reference.Row> all = rank(q, 1000, Map.of());
        assertEquals(7, all.size());
        assertSameRows(Reference.ranked(vectors, q), all);
        assertTrue(rank(q, 0, Map.of()).isEmpty());
        assertTrue(rank(new double[] {0, 0, 0, 0}, 3, Map.of()).isEmpty());
        List<Map<String, Object>> none = Harness.query(db,
                "CALL guidedrag.rank([], 'embedding', [1.0, 0.0], 3) YIELD node RETURN node", Map.of());
        assertTrue(none.isEmpty());
    }

    @Test
    void nonFiniteQueriesAndStoredVectorsAreRefusedWithTheFix() {
        Harness.write(db, Map.of("a", new double[] {1, 0}, "b", new double[] {0, 1}));
        for (double bad : new double[] {Double.NaN, Double.POSITIVE_INFINITY}) {
            QueryExecutionException e = assertThrows(QueryExecutionException.class,
                    () -> rank(new double[] {1, bad}, 2, Map.of()));
            assertTrue(e.getMessage().contains("queryVector holds " + bad + " at 1; pass finite floats"), e.getMessage());
        }
        Harness.write(db, Map.of("b", new double[] {Double.NaN, 1}));
        for (Map<String, Object> options : List.of(Map.<String, Object>of("cache", false), Map.<String, Object>of())) {
            for (int i = 0; i < 2; i++) { // the second call may read the cache
                QueryExecutionException e = assertThrows(QueryExecutionException.class,
                        () -> rank(new double[] {1, 0}, 2, options));
                assertTrue(e.getMessage().contains("holds NaN or infinity; re-embed that node"), e.getMessage());
            }
        }
    }

    @Test
    void wrongTypesAndDimensionsNameTheProblem() {
        Harness.write(db, Map.of("a", new double[] {1, 0, 0}));
        QueryExecutionException e = assertThrows(QueryExecutionException.class,
                () -> rank(new double[] {1, 0}, 1, Map.of()));
        assertTrue(e.getMessage().contains("3 dimensions, the query vector 2"), e.getMessage());
        Harness.query(db, "MATCH (c:Chunk {id: 'a'}) SET c.embedding = 'text'", Map.of());
        e = assertThrows(QueryExecutionException.class, () -> rank(new double[] {1, 0}, 1, Map.of()));
        assertTrue(e.getMessage().contains("is a String, not a list of floats"), e.getMessage());
    }

    @Test
    void theCacheFollowsCommitsAndIsKeyedByNodeId() {
        Random rng = new Random(11);
        Map<String, double[]> vectors = new LinkedHashMap<>();
        for (int i = 0; i < 20; i++) {
            vectors.put("p" + i, Reference.randomVector(rng, 16));
        }
        Harness.write(db, vectors);
        double[] q = Reference.randomVector(rng, 16);
        List<Reference.Row> before = rank(q, 3, Map.of());
        Map<String, Object> info = Harness.query(db, "CALL guidedrag.cacheInfo()", Map.of()).get(0);
        assertTrue((Long) info.get("entries") >= 20, info.toString());
        assertNull(info.get("warning"));
        // the cache holds node ids (an element id would be built and hashed per look-up)
        VectorCache cache = VectorCache.of(db).cache();
        long nodeId = (Long) Harness.query(db, "MATCH (c:Chunk {id: 'p0'}) RETURN id(c) AS i",
                Map.of()).get(0).get("i");
        assertTrue(cache.get("embedding", nodeId) != null, "p0 cached under " + nodeId);

        Map<String, double[]> changed = new LinkedHashMap<>(vectors);
        changed.put("p7", q.clone()); // p7 becomes the query itself
        Harness.write(db, Map.of("p7", q.clone()));
        assertSameRows(Reference.topWithTies(changed, q, 3), rank(q, 3, Map.of()));
        assertEquals("p7", rank(q, 1, Map.of()).get(0).id());
        Harness.query(db, "MATCH (c:Chunk {id: 'p7'}) DETACH DELETE c", Map.of());
        assertSameRows(before, rank(q, 3, Map.of()));
        // a new node (which may reuse the deleted one's id) is read fresh
        Harness.write(db, Map.of("p7", Arrays.negate(q)));
        vectors.put("p7", Arrays.negate(q));
        assertSameRows(Reference.topWithTies(vectors, q, 3), rank(q, 3, Map.of()));
        // removing the property drops the node from the ranking and from the cache
        String top = before.get(0).id();
        Harness.query(db, "MATCH (c:Chunk {id: $id}) REMOVE c.embedding", Map.of("id", top));
        vectors.remove(top);
        assertSameRows(Reference.topWithTies(vectors, q, 3), rank(q, 3, Map.of()));
    }

    @Test
    void aWriterSeesItsOwnUncommittedWritesAndLeavesNothingInTheCache() {
        Random rng = new Random(13);
        Map<String, double[]> vectors = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
            vectors.put("w" + i, Reference.randomVector(rng, 8));
        }
        Harness.write(db, vectors);
        double[] q = Reference.randomVector(rng, 8);
        List<Reference.Row> before = rank(q, 2, Map.of());
        try (org.neo4j.graphdb.Transaction tx = db.beginTx()) {
            tx.execute("MATCH (c:Chunk {id: 'w3'}) SET c.embedding = $q", Map.of("q", Harness.list(q))).close();
            List<Object> ids = new ArrayList<>();
            tx.execute("MATCH (c:Chunk) WITH collect(c) AS cs CALL guidedrag.rank(cs, 'embedding', $q, 1) "
                    + "YIELD node, warning RETURN node.id AS id, warning", Map.of("q", Harness.list(q)))
                    .forEachRemaining(r -> {
                        ids.add(r.get("id"));
                        assertNull(r.get("warning"), "bypassing the cache for a writer is no warning");
                    });
            assertEquals(List.of("w3"), ids);
            tx.rollback();
        }
        assertSameRows(before, rank(q, 2, Map.of()));
    }

    /** Small helpers over double[]. */
    private static final class Arrays {
        static double[] negate(double[] v) {
            double[] out = new double[v.length];
            for (int i = 0; i < v.length; i++) {
                out[i] = -v[i];
            }
            return out;
        }
    }
}
