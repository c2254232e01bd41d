package guidedrag;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

import org.neo4j.graphdb.Node;

/**
 * The {@code k} highest-scoring nodes offered (a bounded min-heap), plus every node tied with the
 * k-th score: a caller that orders by {@code score DESC, id} and cuts at k then gets exactly the
 * rows a pure-Cypher {@code ORDER BY ... LIMIT k} over all the nodes would give.
 */
final class TopK {

    /** A node and its score. */
    record Scored(Node node, double score) {}

    private final int k;
    private final PriorityQueue<Scored> heap; // the head is the weakest of the current top k
    private final List<Scored> ties = new ArrayList<>(); // equal to the k-th score, out of the heap

    TopK(long k) {
        this.k = (int) Math.max(0, Math.min(k, Integer.MAX_VALUE - 1));
        this.heap = new PriorityQueue<>(Math.min(this.k, 1024) + 1, Comparator.comparingDouble(Scored::score));
    }

    void offer(Node node, double score) {
        if (k == 0 || Double.isNaN(score)) {
            return;
        }
        if (heap.size() < k) {
            heap.add(new Scored(node, score));
            return;
        }
        double weakest = heap.peek().score();
        if (score > weakest) {
            Scored out = heap.poll();
            heap.add(new Scored(node, score));
            double newWeakest = heap.peek().score();
            if (out.score() == newWeakest) {
                ties.add(out);
            }
            ties.removeIf(t -> t.score() < newWeakest);
        } else if (score == weakest) {
            ties.add(new Scored(node, score));
        }
    }

    /** The kept nodes, best first. */
    List<Scored> sorted() {
        List<Scored> result = new ArrayList<>(heap.size() + ties.size());
        result.addAll(heap);
        result.addAll(ties);
        result.sort((a, b) -> Double.compare(b.score(), a.score()));
        return result;
    }
}
