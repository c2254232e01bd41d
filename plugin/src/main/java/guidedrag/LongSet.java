package guidedrag;

import java.util.Arrays;

/**
 * Node ids, each once, in the order first added: what {@code collect(DISTINCT x)} keeps, without a
 * boxed {@code Long} per id (open addressing over the ids, which are dense non-negative longs).
 */
final class LongSet {

    private static final long EMPTY = -1L;

    private long[] items = new long[16];
    private int size;
    private long[] table = newTable(32);

    private static long[] newTable(int capacity) {
        long[] t = new long[capacity];
        Arrays.fill(t, EMPTY);
        return t;
    }

    int size() {
        return size;
    }

    long get(int i) {
        return items[i];
    }

    /** Adds {@code id} (>= 0); false when it was there already. */
    boolean add(long id) {
        int slot = slot(id);
        if (table[slot] == id) {
            return false;
        }
        table[slot] = id;
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        items[size++] = id;
        if (size * 2 > table.length) {
            rehash();
        }
        return true;
    }

    boolean contains(long id) {
        return id >= 0 && table[slot(id)] == id;
    }

    /** The slot holding {@code id}, or the empty one where it would go (linear probing). */
    private int slot(long id) {
        int mask = table.length - 1;
        int slot = mix(id) & mask;
        while (table[slot] != EMPTY && table[slot] != id) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    private void rehash() {
        long[] old = items;
        int n = size;
        table = newTable(table.length * 2);
        for (int i = 0; i < n; i++) {
            table[slot(old[i])] = old[i];
        }
    }

    private static int mix(long id) {
        long h = id * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
