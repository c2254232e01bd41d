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
        int mask = table.length - 1;
        int slot = mix(id) & mask;
        while (table[slot] != EMPTY) {
            if (table[slot] == id) {
                return false;
            }
            slot = (slot + 1) & mask;
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
        int mask = table.length - 1;
        int slot = mix(id) & mask;
        while (table[slot] != EMPTY) {
            if (table[slot] == id) {
                return true;
            }
            slot = (slot + 1) & mask;
        }
        return false;
    }

    /** Keeps the first {@code n} ids added. */
    void truncate(int n) {
        if (n >= size) {
            return;
        }
        size = n;
        table = newTable(table.length);
        int mask = table.length - 1;
        for (int i = 0; i < size; i++) {
            int slot = mix(items[i]) & mask;
            while (table[slot] != EMPTY) {
                slot = (slot + 1) & mask;
            }
            table[slot] = items[i];
        }
    }

    private void rehash() {
        long[] old = items;
        int n = size;
        table = newTable(table.length * 2);
        size = 0;
        long[] keep = items;
        items = new long[keep.length];
        for (int i = 0; i < n; i++) {
            add(old[i]);
        }
    }

    private static int mix(long id) {
        long h = id * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
