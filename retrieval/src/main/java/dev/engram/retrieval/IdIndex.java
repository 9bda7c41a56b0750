package dev.engram.retrieval;

import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The position of each id in a list of distinct ids, in an open-addressing table of ints over the list itself: about
 * 8 to 16 bytes an id, where a hash map takes an entry and a boxed position (some 50 bytes). A snapshot of 100k
 * passages has several hundred thousand entities. Immutable once built; safe to read from any thread.
 */
final class IdIndex implements ToIntFunction<String> {

    private final List<String> ids;
    /** Position + 1 per slot, 0 for an empty one; a power of two at least twice as long as the ids. */
    private final int[] slots;

    /** @param ids distinct ids, not changed afterwards */
    IdIndex(List<String> ids) {
        this.ids = ids;
        int size = Integer.highestOneBit(Math.max(2, ids.size()) * 2 - 1) << 1;
        this.slots = new int[size];
        int mask = size - 1;
        for (int i = 0; i < ids.size(); i++) {
            int at = mix(ids.get(i).hashCode()) & mask;
            while (slots[at] != 0) {
                at = (at + 1) & mask;
            }
            slots[at] = i + 1;
        }
    }

    /** The position of {@code id}, or -1. */
    int indexOf(String id) {
        int mask = slots.length - 1;
        for (int at = mix(id.hashCode()) & mask; ; at = (at + 1) & mask) {
            int slot = slots[at];
            if (slot == 0) {
                return -1;
            }
            if (ids.get(slot - 1).equals(id)) {
                return slot - 1;
            }
        }
    }

    @Override
    public int applyAsInt(String id) {
        return indexOf(id);
    }

    private static int mix(int h) {
        h *= 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
