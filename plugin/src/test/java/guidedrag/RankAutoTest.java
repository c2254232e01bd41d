package guidedrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.graphdb.Transaction;

/**
 * guidedrag.rankAuto's own vector search (the kernel's index seek, looked up by name because its
 * types differ between 5.26 and 2026.x) on the harness's 5.26: U's top as
 * {@code db.index.vector.queryNodes} finds it (random queries far from unit length: the query is
 * validated as the index's similarity function wants it), and a name that is no vector index
 * refused. Its
 * rows against retrieve_boost's on a real server: tests/test_tier_overfetch.py.
 */
class RankAutoTest {

    private static final String INDEX = "vchunk_embedding";
    private static GraphDatabaseService db;

    @BeforeAll
    static void start() {
        db = Harness.shared();
        Random rng = new Random(7);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            Map<String, Object> row = new HashMap<>();
            row.put("id", String.format("v%03d", i));
            row.put("v", Harness.list(Reference.randomVector(rng, 16)));
            rows.add(row);
        }
        try (Transaction tx = db.beginTx()) {
            tx.execute("CREATE VECTOR INDEX " + INDEX + " IF NOT EXISTS FOR (c:VChunk) ON c.embedding "
                    + "OPTIONS {indexConfig: {`vector.dimensions`: 16, `vector.similarity_function`: 'cosine'}}").close();
            tx.commit();
        }
        try (Transaction tx = db.beginTx()) {
            tx.execute("UNWIND $rows AS row MERGE (c:VChunk {id: row.id}) SET c.embedding = row.v",
                    Map.of("rows", rows)).close();
            tx.commit();
        }
        Harness.query(db, "CALL db.awaitIndexes(60)", Map.of());
    }

    private static List<String> ids(List<Map<String, Object>> rows) {
        List<String> ids = new ArrayList<>();
        rows.forEach(r -> ids.add((String) r.get("id")));
        return ids;
    }

    @Test
    void withoutTiersTheRowsAreTheIndexTopAsQueryNodesFindsIt() {
        Random rng = new Random(11);
        for (int trial = 0; trial < 10; trial++) {
            List<Double> q = Harness.list(Reference.randomVector(rng, 16));
            for (long k : new long[] {1, 5, 12}) {
                List<Map<String, Object>> auto = Harness.query(db,
                        "CALL guidedrag.rankAuto([], [], [], $q, $k, {indexName: $index, property: 'embedding', "
                                + "idProperty: 'id'}) YIELD node, score RETURN node.id AS id, score",
                        Map.of("q", q, "k", k, "index", INDEX));
                List<Map<String, Object>> search = Harness.query(db,
                        "CALL db.index.vector.queryNodes($index, $k, $q) YIELD node, score "
                                + "RETURN node.id AS id, score ORDER BY score DESC, id",
                        Map.of("q", q, "k", k, "index", INDEX));
                // the same nodes; rankTiers then scores them exactly from the store (the index's
                // own scores are approximate, quantized on 5.26), so near-ties may reorder
                assertEquals(new java.util.TreeSet<>(ids(search)), new java.util.TreeSet<>(ids(auto)),
                        "trial " + trial + ", k " + k);
                assertEquals(k, auto.size());
            }
        }
    }

    @Test
    void aNameThatIsNoVectorIndexIsRefusedWithTheFix() {
        QueryExecutionException e = assertThrows(QueryExecutionException.class, () -> Harness.query(db,
                "CALL guidedrag.rankAuto([], [], [], [1.0, 0.0], 3, {indexName: 'nope', property: 'embedding'}) "
                        + "YIELD node RETURN node", Map.of()));
        assertTrue(e.getMessage().contains("no vector index named 'nope'; give options.indexName"), e.getMessage());
    }
}
