package guidedrag;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Transaction;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

/** An in-process Neo4j with the plugin's procedures (its cache lifecycle loads from the classpath). */
final class Harness {

    private static Neo4j shared;

    private Harness() {}

    /**
     * One server for the test classes that need no lifecycle of their own (a start costs tens of
     * seconds); it stops when the test JVM exits.
     */
    static synchronized GraphDatabaseService shared() {
        if (shared == null) {
            Neo4j neo4j = start();
            Runtime.getRuntime().addShutdownHook(new Thread(neo4j::close));
            shared = neo4j;
        }
        return shared.defaultDatabaseService();
    }

    static Neo4j start() {
        return Neo4jBuilders.newInProcessBuilder()
                .withDisabledServer()
                .withProcedure(Rank.class)
                .withProcedure(RankTiers.class)
                .withProcedure(RankAuto.class)
                .withFunction(EntityTiers.class)
                .build();
    }

    /** Chunks {id, embedding} (no embedding where the vector is null), replacing any there. */
    static void write(GraphDatabaseService db, Map<String, double[]> vectors) {
        List<Map<String, Object>> rows = new ArrayList<>();
        vectors.forEach((id, v) -> {
            Map<String, Object> row = new java.util.HashMap<>();
            row.put("id", id);
            row.put("v", v == null ? null : Arrays.stream(v).boxed().toList());
            rows.add(row);
        });
        try (Transaction tx = db.beginTx()) {
            tx.execute("UNWIND $rows AS row MERGE (c:Chunk {id: row.id}) SET c.embedding = row.v",
                    Map.of("rows", rows)).close();
            tx.commit();
        }
    }

    static void clear(GraphDatabaseService db) {
        try (Transaction tx = db.beginTx()) {
            tx.execute("MATCH (n) DETACH DELETE n").close();
            tx.commit();
        }
    }

    static List<Map<String, Object>> query(GraphDatabaseService db, String cypher, Map<String, Object> params) {
        try (Transaction tx = db.beginTx()) {
            List<Map<String, Object>> rows = new ArrayList<>();
            tx.execute(cypher, params).forEachRemaining(rows::add);
            tx.commit();
            return rows;
        }
    }

    static List<Double> list(double[] v) {
        return Arrays.stream(v).boxed().toList();
    }
}
