package guidedrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.harness.Neo4j;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * The cache's lifecycle ({@link CacheExtensionFactory}): made when a database starts, discarded
 * when it stops, found by the database's id; and the warning when it cannot run.
 */
class CacheLifecycleTest {

    private static final String RANK = "MATCH (c:Chunk) WITH collect(c) AS cs "
            + "CALL guidedrag.rank(cs, 'embedding', $q, $k) YIELD node, score, warning "
            + "RETURN node.id AS id, score, warning ORDER BY score DESC, id";

    private static UUID databaseId(GraphDatabaseService db) {
        return ((GraphDatabaseAPI) db).databaseId().databaseId().uuid();
    }

    private static Map<String, double[]> vectors(Random rng) {
        Map<String, double[]> vectors = new LinkedHashMap<>();
        for (int i = 0; i < 30; i++) {
            vectors.put(String.format("c%02d", i), Reference.randomVector(rng, 16));
        }
        return vectors;
    }

    private static List<Object> ids(List<Map<String, Object>> rows) {
        return rows.stream().map(r -> r.get("id")).toList();
    }

    private static List<Object> names(List<Reference.Row> rows) {
        return rows.stream().<Object>map(Reference.Row::id).toList();
    }

    /** Internal ids, read only to show the second store reuses the first one's. */
    private static List<Object> internalIds(GraphDatabaseService db) {
        return ids(Harness.query(db, "MATCH (c:Chunk) RETURN c.id AS name, id(c) AS id ORDER BY name", Map.of()));
    }

    private static long entries(GraphDatabaseService db) {
        return (Long) Harness.query(db, "CALL guidedrag.cacheInfo()", Map.of()).get(0).get("entries");
    }

    @Test
    void aNewStoreUnderTheSameNameNeverSeesTheOldStoresVectors() {
        double[] q = Reference.randomVector(new Random(1), 16);
        Map<String, double[]> first = vectors(new Random(2));
        Map<String, double[]> second = vectors(new Random(3)); // same names, other vectors
        List<Object> firstIds;
        VectorCache firstCache;
        UUID firstId;
        try (Neo4j neo4j = Harness.start()) {
            GraphDatabaseService db = neo4j.defaultDatabaseService();
            firstId = databaseId(db);
            assertTrue(VectorCache.running().contains(firstId), "started with the database, before any call");
            Harness.write(db, first);
            firstIds = internalIds(db);
            List<Map<String, Object>> rows = Harness.query(db, RANK, Map.of("q", Harness.list(q), "k", 5L));
            assertEquals(names(Reference.topWithTies(first, q, 5)), ids(rows));
            assertTrue(entries(db) >= 30);
            firstCache = VectorCache.of(db).cache();
        }
        // stopped with the database: discarded, its listener gone
        assertFalse(VectorCache.running().contains(firstId));
        assertEquals(0, firstCache.entries());

        try (Neo4j neo4j = Harness.start()) { // `neo4j` again, a new store in the same JVM
            GraphDatabaseService db = neo4j.defaultDatabaseService();
            assertEquals("neo4j", db.databaseName());
            assertNotEquals(firstId, databaseId(db));
            assertEquals(0, entries(db));
            Harness.write(db, second);
            assertEquals(firstIds, internalIds(db), "the same internal ids: what a cache by name and id would mix up");
            for (int pass = 0; pass < 2; pass++) { // from the store, then from the new cache
                List<Map<String, Object>> rows = Harness.query(db, RANK, Map.of("q", Harness.list(q), "k", 5L));
                List<Reference.Row> want = Reference.topWithTies(second, q, 5);
                assertEquals(names(want), ids(rows));
                for (int i = 0; i < rows.size(); i++) {
                    assertEquals(want.get(i).score(), (Double) rows.get(i).get("score"), 1e-12);
                }
            }
            // the new cache's listener (registered by the lifecycle) follows this store's commits
            Harness.write(db, Map.of("c29", q.clone()));
            second.put("c29", q.clone());
            List<Map<String, Object>> rows = Harness.query(db, RANK, Map.of("q", Harness.list(q), "k", 1L));
            assertEquals(List.of("c29"), ids(rows));
        }
    }

    @Test
    void whenTheCacheCannotRunEveryRowAndTheLogSaySoAndTheRankingStaysExact() {
        Map<String, double[]> vectors = vectors(new Random(4));
        double[] q = Reference.randomVector(new Random(5), 16);
        try (Neo4j neo4j = Harness.start()) {
            GraphDatabaseService db = neo4j.defaultDatabaseService();
            Harness.write(db, vectors);
            Map<String, Object> info = Harness.query(db, "CALL guidedrag.cacheInfo()", Map.of()).get(0);
            assertNull(info.get("warning"));
            // as if the lifecycle had failed on an API this Neo4j lacks
            UUID id = databaseId(db);
            VectorCache.of(db).cache().close();
            VectorCache.failed(id, "the rank plugin's embedding cache could not start "
                    + "(java.lang.NoSuchMethodError: simulated)");
            List<Map<String, Object>> rows = Harness.query(db, RANK, Map.of("q", Harness.list(q), "k", 4L));
            assertEquals(names(Reference.topWithTies(vectors, q, 4)), ids(rows));
            for (Map<String, Object> row : rows) {
                String warning = (String) row.get("warning");
                assertNotNull(warning);
                assertTrue(warning.contains("NoSuchMethodError: simulated") && warning.contains("read from the store"),
                        warning);
            }
            List<Map<String, Object>> tiers = Harness.query(db, "MATCH (c:Chunk) WITH collect(c) AS cs "
                    + "CALL guidedrag.rankTiers([cs], [0.1], cs, 'embedding', $q, 2) YIELD node, warning "
                    + "RETURN warning", Map.of("q", Harness.list(q)));
            assertFalse(tiers.isEmpty());
            tiers.forEach(r -> assertTrue(((String) r.get("warning")).contains("simulated")));
            info = Harness.query(db, "CALL guidedrag.cacheInfo()", Map.of()).get(0);
            assertEquals(0L, info.get("entries"));
            assertTrue(((String) info.get("warning")).contains("simulated"));
            assertEquals(0, entries(db)); // nothing was cached meanwhile

            // without a recorded reason: the lifecycle is simply not running here
            VectorCache.forget(id);
            rows = Harness.query(db, RANK, Map.of("q", Harness.list(q), "k", 1L));
            assertTrue(((String) rows.get(0).get("warning")).contains(CacheExtensionFactory.NAME + ") is not running"));

            ByteArrayOutputStream out = new ByteArrayOutputStream();
            neo4j.printLogs(new PrintStream(out, true, StandardCharsets.UTF_8));
            String log = out.toString(StandardCharsets.UTF_8);
            List<String> lines = new ArrayList<>();
            for (String line : log.split("\n")) {
                if (line.contains("guidedrag: the embedding cache is off")) {
                    lines.add(line);
                }
            }
            assertTrue(lines.stream().anyMatch(l -> l.contains("WARN") && l.contains("simulated")), log);
            // once per reason, not once per call
            assertEquals(1, lines.stream().filter(l -> l.contains("simulated")).count(), String.join("\n", lines));
        }
    }
}
