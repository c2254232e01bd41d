package guidedrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * guidedrag.nearStep and guidedrag.mentioned against the Cypher they replace (one step of
 * cypher/select_near.cypher, the decision and listing of cypher/select_mentioned.cypher), on
 * random graphs with the things a walk must not count: chunks of another label, entities without
 * the entity label, mentions written the other way round, an entity repeated in the list.
 */
class EntityTiersTest {

    private static final Map<String, Object> OUT =
            Map.of("chunkLabel", "Chunk", "entityLabel", "Entity", "mentions", "MENTIONS", "direction", "out");
    private static final Map<String, Object> IN =
            Map.of("chunkLabel", "Chunk", "entityLabel", "Entity", "mentions", "FROM_CHUNK", "direction", "in");

    /** The schema map's values as the functions' own parameters, beside {@code params}. */
    private static Map<String, Object> with(Map<String, Object> params, Map<String, Object> schema) {
        Map<String, Object> all = new HashMap<>(params);
        all.putAll(schema);
        return all;
    }

    /** select_near's step, as Cypher walks it (the mentions arrow written for each direction). */
    private static String cypherStep(boolean out) {
        String toChunk = out ? "(c:Chunk)-[:MENTIONS]->(e)" : "(c:Chunk)<-[:FROM_CHUNK]-(e)";
        String toEntity = out ? "(c)-[:MENTIONS]->(e2:Entity)" : "(c)<-[:FROM_CHUNK]-(e2:Entity)";
        return "MATCH (e:Entity) WHERE e.id IN $ids WITH collect(DISTINCT e) AS ents "
                + "CALL (ents) { UNWIND CASE WHEN ents = [] THEN [null] ELSE ents END AS e "
                + "  OPTIONAL MATCH " + toChunk + " OPTIONAL MATCH " + toEntity
                + "  WITH ents, collect(DISTINCT e2) AS more "
                + "  WITH ents + [y IN more WHERE NOT y IN ents] AS grown "
                + "  RETURN [x IN grown[..$cap] | x.id] AS ids, size(grown) > $cap AS truncated } "
                + "RETURN ids, truncated";
    }

    private static final String PLUGIN_STEP = "MATCH (e:Entity) WHERE e.id IN $ids WITH collect(DISTINCT e) AS ents "
            + "WITH guidedrag.nearStep(ents, $cap, $chunkLabel, $entityLabel, $mentions, $direction) AS step "
            + "RETURN [x IN step.entities | x.id] AS ids, step.truncated AS truncated";

    /** select_mentioned's fragment, over the entities listed in $ids (in that order, repeats kept). */
    private static String cypherMentioned(boolean out) {
        String mention = out ? "()-[:MENTIONS]->(e)" : "()<-[:FROM_CHUNK]-(e)";
        String chunk = out ? "(c:Chunk)-[:MENTIONS]->(e)" : "(c:Chunk)<-[:FROM_CHUNK]-(e)";
        String chunkY = out ? "(c:Chunk)-[:MENTIONS]->(y)" : "(c:Chunk)<-[:FROM_CHUNK]-(y)";
        return "UNWIND $ids AS id MATCH (e:Entity {id: id}) WITH collect(e) AS x "
                + "CALL (x) { CALL (x) { UNWIND x AS e WITH e, COUNT { " + mention + " } AS degree "
                + "  ORDER BY degree DESC WITH collect({e: e, degree: degree})[..1] AS top, sum(degree) AS mentions "
                + "  UNWIND CASE WHEN top = [] THEN [null] ELSE top END AS h "
                + "  WITH mentions, h.e AS y, h.degree AS degree "
                + "  RETURN mentions > $listMax OR coalesce(degree > $exactMax AND COUNT { MATCH " + chunkY
                + "    WITH DISTINCT c LIMIT $exactMax + 1 RETURN c } > $exactMax, false) AS over } "
                + "  CALL (x, over) { WITH x WHERE NOT over UNWIND CASE WHEN x = [] THEN [null] ELSE x END AS e "
                + "    OPTIONAL MATCH " + chunk + " RETURN collect(DISTINCT c) AS s } "
                + "  RETURN s, over } "
                + "RETURN [c IN s | c.id] AS ids, over";
    }

    private static final String PLUGIN_MENTIONED = "UNWIND $ids AS id MATCH (e:Entity {id: id}) WITH collect(e) AS x "
            + "WITH guidedrag.mentioned(x, $exactMax, $listMax, $chunkLabel, $mentions, $direction) AS listing "
            + "RETURN [c IN listing.chunks | c.id] AS ids, listing.over AS over";

    private static GraphDatabaseService db;

    @BeforeAll
    static void start() {
        db = Harness.shared();
    }

    @BeforeEach
    void empty() {
        Harness.clear(db);
    }

    /**
     * Chunks c0.., entities e0.., random mentions (skewed, so some entities are hubs), and the
     * noise: Other-labelled nodes mentioning entities, an unlabelled "entity" x0 that chunks
     * mention, and a chunk mentioning an entity twice.
     */
    private static void graph(Random rng, int chunks, int entities, boolean out) {
        List<Map<String, Object>> mentions = new ArrayList<>();
        for (int c = 0; c < chunks; c++) {
            int n = 1 + rng.nextInt(5);
            for (int k = 0; k < n; k++) {
                int e = (int) Math.floor(Math.pow(rng.nextDouble(), 2.5) * entities); // hubs first
                mentions.add(Map.of("c", "c" + c, "e", "e" + e));
            }
        }
        String write = out ? "MERGE (c)-[:MENTIONS]->(e)" : "MERGE (e)-[:FROM_CHUNK]->(c)";
        String writeTwice = out ? "CREATE (c)-[:MENTIONS]->(e)" : "CREATE (e)-[:FROM_CHUNK]->(c)";
        Harness.query(db, "UNWIND range(0, $n - 1) AS i CREATE (:Chunk {id: 'c' + i})", Map.of("n", chunks));
        Harness.query(db, "UNWIND range(0, $n - 1) AS i CREATE (:Entity {id: 'e' + i})", Map.of("n", entities));
        Harness.query(db, "UNWIND $rows AS row MATCH (c:Chunk {id: row.c}), (e:Entity {id: row.e}) " + write,
                Map.of("rows", mentions));
        Harness.query(db, "CREATE (:Other {id: 'o0'}), (:Other {id: 'o1'}), (:Thing {id: 'x0'})", Map.of());
        Harness.query(db, "MATCH (c:Other), (e:Entity) WHERE e.id IN ['e0', 'e1', 'e5'] " + write, Map.of());
        Harness.query(db, "MATCH (c:Chunk), (e:Thing) WHERE c.id IN ['c0', 'c1', 'c2'] " + write, Map.of());
        Harness.query(db, "MATCH (c:Chunk {id: 'c3'}), (e:Entity {id: 'e2'}) " + writeTwice, Map.of());
    }

    /** The same decision, and the same chunks (as a set: the order is the walk's), each once. */
    private static void assertSameListing(Map<String, Object> want, Map<String, Object> got, String what) {
        assertEquals(want.get("over"), got.get("over"), what);
        List<?> wantIds = (List<?>) want.get("ids");
        List<?> gotIds = (List<?>) got.get("ids");
        assertEquals(wantIds.size(), gotIds.size(), what);
        assertEquals(Set.copyOf(wantIds), new HashSet<>(gotIds), what);
    }

    private static Map<String, Object> row(String cypher, Map<String, Object> params) {
        return Harness.query(db, cypher, params).get(0);
    }

    private static List<String> seeds(Random rng, int entities) {
        List<String> ids = new ArrayList<>();
        int n = 1 + rng.nextInt(3);
        for (int i = 0; i < n; i++) {
            ids.add("e" + rng.nextInt(entities));
        }
        return ids;
    }

    @Test
    void nearStepGivesCyphersEntitiesInCyphersOrder() {
        for (boolean out : new boolean[] {true, false}) {
            Harness.clear(db);
            Random rng = new Random(out ? 3 : 4);
            graph(rng, 200, 60, out);
            for (int trial = 0; trial < 40; trial++) {
                List<String> ids = seeds(rng, 60);
                for (long cap : new long[] {10_000, 25, 3, 0}) {
                    Map<String, Object> params = with(Map.of("ids", ids, "cap", cap), out ? OUT : IN);
                    Map<String, Object> want = row(cypherStep(out), params);
                    Map<String, Object> got = row(PLUGIN_STEP, params);
                    assertEquals(want, got, "near step of " + ids + " cap " + cap + (out ? " out" : " in"));
                }
            }
        }
    }

    @Test
    void mentionedDecidesAndListsAsCypherDoes() {
        for (boolean out : new boolean[] {true, false}) {
            Harness.clear(db);
            Random rng = new Random(out ? 5 : 6);
            graph(rng, 300, 80, out);
            // both kinds of entity node: dense ones (past the kernel's grouping threshold, 50 by
            // default: degrees from the store) and sparse ones (counted on the walk that lists them)
            String mention = out ? "()-[:MENTIONS]->(e)" : "()<-[:FROM_CHUNK]-(e)";
            Map<String, Object> spread = row("MATCH (e:Entity) WITH COUNT { " + mention + " } AS d "
                    + "RETURN max(d) AS most, min(d) AS least", Map.of());
            assertTrue((Long) spread.get("most") > 100 && (Long) spread.get("least") < 10, spread.toString());
            int overSeen = 0;
            int listedSeen = 0;
            for (int trial = 0; trial < 60; trial++) {
                List<String> ids = seeds(rng, 80);
                if (trial % 7 == 0) {
                    ids.add(ids.get(0)); // a repeated entity counts twice in the sum, as in Cypher
                }
                if (trial % 11 == 0) {
                    ids = List.of(); // no entity: nothing listed, not over
                }
                for (long[] bounds : new long[][] {{10_000, 10_000}, {5, 10_000}, {10_000, 20}, {10_000, 120}, {0, 0}, {2, 3}}) {
                    Map<String, Object> params = with(Map.of("ids", ids, "exactMax", bounds[0],
                            "listMax", bounds[1]), out ? OUT : IN);
                    Map<String, Object> want = row(cypherMentioned(out), params);
                    Map<String, Object> got = row(PLUGIN_MENTIONED, params);
                    String what = "mentioned " + ids + " bounds " + bounds[0] + "/" + bounds[1];
                    assertSameListing(want, got, what);
                    if (Boolean.TRUE.equals(got.get("over"))) {
                        overSeen++;
                    } else if (!((List<?>) got.get("ids")).isEmpty()) {
                        listedSeen++;
                    }
                }
            }
            assertTrue(overSeen > 20 && listedSeen > 20, "both outcomes exercised: " + overSeen + "/" + listedSeen);
        }
    }

    @Test
    void degreesAreReadFromTheDegreeStore() {
        // NodeCursor.degree returns an int on 5.26 and a long on 2026.x: found by name either way
        assertNotNull(TierWalk.DEGREE, "NodeCursor.degree(RelationshipSelection) not found");
    }

    @Test
    void labelsOrTypesTheGraphLacksFindNothing() {
        graph(new Random(7), 30, 10, true);
        Map<String, Object> schema = new HashMap<>(OUT);
        schema.put("mentions", "NO_SUCH_TYPE");
        Map<String, Object> got = row(PLUGIN_STEP, with(Map.of("ids", List.of("e0"), "cap", 100L), schema));
        assertEquals(List.of("e0"), got.get("ids"));
        schema.put("mentions", "MENTIONS");
        schema.put("chunkLabel", "NoSuchLabel");
        got = row(PLUGIN_MENTIONED, with(Map.of("ids", List.of("e0"), "exactMax", 100L, "listMax", 100L), schema));
        assertEquals(List.of(), got.get("ids"));
    }

    @Test
    void aBadSchemaIsOneClearError() {
        graph(new Random(8), 10, 5, true);
        Map<String, Object> schema = new HashMap<>(OUT);
        schema.put("direction", "both");
        QueryExecutionException e = assertThrows(QueryExecutionException.class,
                () -> row(PLUGIN_STEP, with(Map.of("ids", List.of("e0"), "cap", 10L), schema)));
        assertTrue(e.getMessage().contains("direction must be 'out' or 'in', got 'both'"), e.getMessage());
        schema.put("direction", "out");
        schema.put("entityLabel", "");
        e = assertThrows(QueryExecutionException.class,
                () -> row(PLUGIN_STEP, with(Map.of("ids", List.of("e0"), "cap", 10L), schema)));
        assertTrue(e.getMessage().contains("entityLabel must be a non-empty name"), e.getMessage());
    }

    /** Plugin and Cypher agree on near steps and listings of {@code seeds} (both directions' schema OUT). */
    private static void assertSameWalks(List<List<String>> seeds, String when) {
        for (List<String> ids : seeds) {
            for (long cap : new long[] {10_000, 3}) {
                Map<String, Object> params = with(Map.of("ids", ids, "cap", cap), OUT);
                assertEquals(row(cypherStep(true), params), row(PLUGIN_STEP, params), "near " + ids + " " + when);
            }
            for (long[] bounds : new long[][] {{10_000, 10_000}, {10_000, 20}}) {
                Map<String, Object> params = with(Map.of("ids", ids, "exactMax", bounds[0], "listMax", bounds[1]), OUT);
                Map<String, Object> want = row(cypherMentioned(true), params);
                Map<String, Object> got = row(PLUGIN_MENTIONED, params);
                assertSameListing(want, got, "mentioned " + ids + " " + when);
            }
        }
    }

    @Test
    void cachedNeighbourListsFollowEveryCommitThatChangesTheGraphsShape() {
        graph(new Random(10), 120, 30, true);
        List<List<String>> seeds = List.of(List.of("e0"), List.of("e3", "e7"), List.of("e12"), List.of("e1", "e2"));
        assertSameWalks(seeds, "first (walks read and cached)");
        assertSameWalks(seeds, "again (from the cache)");
        Harness.query(db, "MATCH (e:Entity {id: 'e12'}) CREATE (:Chunk {id: 'late'})-[:MENTIONS]->(e)", Map.of());
        assertSameWalks(seeds, "after a mention was created");
        Harness.query(db, "MATCH (:Chunk)-[m:MENTIONS]->(:Entity {id: 'e3'}) WITH m LIMIT 2 DELETE m", Map.of());
        assertSameWalks(seeds, "after mentions were deleted");
        Harness.query(db, "MATCH (c:Chunk)-[:MENTIONS]->(:Entity {id: 'e0'}) WITH c LIMIT 3 REMOVE c:Chunk SET c:Gone",
                Map.of());
        assertSameWalks(seeds, "after chunk labels were removed");
        Harness.query(db, "MATCH (c:Gone) SET c:Chunk", Map.of());
        Harness.query(db, "MATCH (x:Thing) SET x:Entity", Map.of());
        assertSameWalks(seeds, "after labels were added");
        Harness.query(db, "MATCH (c:Chunk {id: 'late'}) DETACH DELETE c", Map.of());
        assertSameWalks(seeds, "after a chunk was deleted");
    }

    @Test
    void aKeptNearStepFollowsACommitThatGrowsIt() {
        // A step from one entity is kept whole (near(x)); a commit that gives x's chunks a new
        // entity must reach the next step, as it reaches Cypher's.
        graph(new Random(11), 120, 30, true);
        List<List<String>> seeds = List.of(List.of("e12"), List.of("e0"), List.of("e25"));
        assertSameWalks(seeds, "first (steps walked and kept)");
        assertSameWalks(seeds, "again (the kept steps)");
        Harness.query(db, "MATCH (e:Entity {id: 'e12'}) "
                + "CREATE (:Entity {id: 'fresh'})<-[:MENTIONS]-(:Chunk {id: 'late'})-[:MENTIONS]->(e)", Map.of());
        assertSameWalks(seeds, "after a chunk of e12 mentioning a new entity was created");
        Map<String, Object> params = with(Map.of("ids", List.of("e12"), "cap", 10_000L), OUT);
        assertTrue(((List<?>) row(PLUGIN_STEP, params).get("ids")).contains("fresh"), "e12's step has the new entity");
        Harness.query(db, "MATCH (c:Chunk {id: 'late'}) DETACH DELETE c", Map.of());
        assertSameWalks(seeds, "after that chunk was deleted");
    }

    @Test
    void anOverVerdictIsKeptAndFollowsCommitsThatChangeIt() {
        // A hub's list past listMax is "over": kept (asked again, nothing new is read or kept),
        // kept per bounds, and dropped by a commit that brings the hub under the bound.
        Harness.query(db, "CREATE (e:Entity {id: 'hub'}) WITH e UNWIND range(0, 29) AS i "
                + "CREATE (:Chunk {id: 'c' + i})-[:MENTIONS]->(e)", Map.of());
        Map<String, Object> at20 = with(Map.of("ids", List.of("hub"), "exactMax", 10_000L, "listMax", 20L), OUT);
        Map<String, Object> at25 = with(Map.of("ids", List.of("hub"), "exactMax", 10_000L, "listMax", 25L), OUT);
        VectorCache cache = VectorCache.of(db).cache();
        assertEquals(true, row(PLUGIN_MENTIONED, at20).get("over"), "30 mentions are over 20");
        long kept = cache.walkEntries();
        assertEquals(true, row(PLUGIN_MENTIONED, at20).get("over"), "asked again");
        assertEquals(kept, cache.walkEntries(), "asked again: nothing new kept");
        assertEquals(true, row(PLUGIN_MENTIONED, at25).get("over"), "30 mentions are over 25");
        assertEquals(kept + 1, cache.walkEntries(), "the verdict at other bounds is kept apart");
        Harness.query(db, "MATCH (c:Chunk)-[m:MENTIONS]->(:Entity {id: 'hub'}) WITH m LIMIT 12 DELETE m", Map.of());
        for (Map<String, Object> params : List.of(at20, at25)) {
            Map<String, Object> want = row(cypherMentioned(true), params);
            Map<String, Object> got = row(PLUGIN_MENTIONED, params);
            assertEquals(false, want.get("over"), "18 mentions are under the bound");
            assertSameListing(want, got, "after 12 mentions were deleted");
        }
    }

    @Test
    void aWriterReadsTheChainsAndStillAgreesWithCypher() {
        // A transaction with uncommitted changes never uses the cache: the chains are read with
        // the bound, which may cut a read short. Same answers as Cypher in that transaction.
        graph(new Random(15), 200, 50, true);
        Random rng = new Random(16);
        try (var tx = db.beginTx()) {
            tx.execute("CREATE (:Scratch)").close(); // a change: this transaction walks the chains
            for (int trial = 0; trial < 25; trial++) {
                List<String> ids = seeds(rng, 50);
                for (long cap : new long[] {10_000, 3}) {
                    Map<String, Object> params = with(Map.of("ids", ids, "cap", cap), OUT);
                    assertEquals(tx.execute(cypherStep(true), params).next(),
                            tx.execute(PLUGIN_STEP, params).next(), "near " + ids + " cap " + cap);
                }
                for (long[] bounds : new long[][] {{10_000, 10_000}, {10_000, 20}, {10_000, 120}, {5, 10_000}}) {
                    Map<String, Object> params = with(Map.of("ids", ids, "exactMax", bounds[0],
                            "listMax", bounds[1]), OUT);
                    Map<String, Object> want = tx.execute(cypherMentioned(true), params).next();
                    Map<String, Object> got = tx.execute(PLUGIN_MENTIONED, params).next();
                    String what = "mentioned " + ids + " bounds " + bounds[0] + "/" + bounds[1];
                    assertSameListing(want, got, what);
                }
            }
            tx.rollback();
        }
    }

    @Test
    void aWriterWalksItsOwnWritesEvenWhereTheCacheHoldsTheEntity() {
        graph(new Random(12), 40, 10, true);
        Map<String, Object> params = with(Map.of("ids", List.of("e0"), "exactMax", 10_000L, "listMax", 10_000L), OUT);
        @SuppressWarnings("unchecked")
        List<String> before = (List<String>) row(PLUGIN_MENTIONED, params).get("ids"); // cached now
        try (var tx = db.beginTx()) {
            tx.execute("MATCH (e:Entity {id: 'e0'}) CREATE (:Chunk {id: 'mine'})-[:MENTIONS]->(e)").close();
            @SuppressWarnings("unchecked")
            List<String> inside = (List<String>) tx.execute(PLUGIN_MENTIONED, params).next().get("ids");
            assertTrue(inside.contains("mine") && inside.containsAll(before), inside.toString());
            tx.rollback();
        }
        assertEquals(before, row(PLUGIN_MENTIONED, params).get("ids"), "the rolled-back chunk is not listed");
    }

    @Test
    void aWalkSeesItsOwnTransactionsWrites() {
        graph(new Random(9), 20, 8, true);
        try (var tx = db.beginTx()) {
            tx.execute("CREATE (:Chunk {id: 'new'})-[:MENTIONS]->(:Entity {id: 'fresh'})").close();
            var result = tx.execute(PLUGIN_MENTIONED,
                    with(Map.of("ids", List.of("fresh"), "exactMax", 10L, "listMax", 10L), OUT));
            assertEquals(List.of("new"), result.next().get("ids"));
            tx.rollback();
        }
    }
}
