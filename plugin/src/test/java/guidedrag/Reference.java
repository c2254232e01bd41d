package guidedrag;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The plain-Java answers the procedures are checked against: cosine in doubles, score
 * (1 + cos) / 2 as {@code vector.similarity.cosine} gives it, and the rankings the pure-Cypher
 * queries compute (ORDER BY score DESC, id; ties with the k-th kept where the procedure keeps them).
 */
final class Reference {

    record Row(String id, double score) {}

    private Reference() {}

    /** Vectors whose components are float32 values, so the cache's float copy is exact. */
    static double[] randomVector(Random rng, int dim) {
        double[] v = new double[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = (float) rng.nextGaussian();
        }
        return v;
    }

    /** (1 + cos) / 2, or NaN where cosine is undefined (a zero vector), as Cypher's null. */
    static double score(double[] v, double[] q) {
        double dot = 0, vv = 0, qq = 0;
        for (int i = 0; i < v.length; i++) {
            dot += v[i] * q[i];
            vv += v[i] * v[i];
            qq += q[i] * q[i];
        }
        if (vv == 0 || qq == 0) {
            return Double.NaN;
        }
        double cos = Math.max(-1.0, Math.min(1.0, dot / Math.sqrt(vv * qq)));
        return (1 + cos) / 2;
    }

    static final Comparator<Row> ORDER =
            Comparator.comparingDouble((Row r) -> -r.score()).thenComparing(Row::id);

    /** Every node with a vector, best first. */
    static List<Row> ranked(Map<String, double[]> vectors, double[] q) {
        List<Row> rows = new ArrayList<>();
        vectors.forEach((id, v) -> {
            double s = v == null ? Double.NaN : score(v, q);
            if (!Double.isNaN(s)) {
                rows.add(new Row(id, s));
            }
        });
        rows.sort(ORDER);
        return rows;
    }

    /** The top k plus every row tied with the k-th score (what guidedrag.rank returns). */
    static List<Row> topWithTies(Map<String, double[]> vectors, double[] q, int k) {
        List<Row> all = ranked(vectors, q);
        if (k <= 0 || all.isEmpty()) {
            return List.of();
        }
        int end = Math.min(k, all.size());
        double kth = all.get(end - 1).score();
        while (end < all.size() && all.get(end).score() == kth) {
            end++;
        }
        return all.subList(0, end);
    }

    /** The boosted top k over every node: score plus the weight of its first tier. */
    static List<Row> boostedTop(Map<String, double[]> vectors, List<List<String>> tiers, List<Double> weights,
            double[] q, int k) {
        List<Row> rows = new ArrayList<>();
        for (Row r : ranked(vectors, q)) {
            Integer best = bestTier(tiers, r.id());
            rows.add(new Row(r.id(), r.score() + (best == null ? 0.0 : weights.get(best))));
        }
        rows.sort(ORDER);
        return rows.subList(0, Math.min(k, rows.size()));
    }

    static Integer bestTier(List<List<String>> tiers, String id) {
        for (int i = 0; i < tiers.size(); i++) {
            if (tiers.get(i).contains(id)) {
                return i;
            }
        }
        return null;
    }

    static List<Long> memberOf(List<List<String>> tiers, String id) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < tiers.size(); i++) {
            if (tiers.get(i).contains(id)) {
                out.add((long) i);
            }
        }
        return out;
    }
}
