package dev.engram.retrieval;

import java.util.Arrays;
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
        this.slots = new int[capacity(ids.size())];
        int mask = slots.length - 1;
        for (int i = 0; i < ids.size(); i++) {
            int at = mix(ids.get(i).hashCode()) & mask;
            while (slots[at] != 0) {
                at = (at + 1) & mask;
            }
            slots[at] = i + 1;
        }
    }

    private IdIndex(List<String> ids, int[] slots) {
        this.ids = ids;
        this.slots = slots;
    }

    /** A power of two at least twice {@code n}. */
    private static int capacity(int n) {
        return Integer.highestOneBit(Math.max(2, n) * 2 - 1) << 1;
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

    /**
     * The same table over a list that grows by appending, for a builder that declares ids one by one: no entry object
     * or boxed position per id, and each id's mixed hash kept beside it so that a probe compares strings only where
     * the hashes agree. Not safe for use by several threads.
     */
    static final class Growing {
        private final List<String> ids;
        private int[] slots = new int[capacity(0)];
        /** The mixed hash of the id at each position. */
        private int[] hashes = new int[16];

        private boolean frozen;

        /** @param ids an empty list, which this index appends the ids it is given to and nothing else changes */
        Growing(List<String> ids) {
            if (!ids.isEmpty()) {
                throw new IllegalArgumentException("the ids of a growing index start empty: " + ids.size());
            }
            this.ids = ids;
        }

        /** The position of {@code id}; when absent, it is appended to the list and {@code -1} is returned. */
        int positionOf(String id) {
            if (frozen) {
                throw new IllegalStateException("the index is frozen");
            }
            int n = ids.size();
            if (2 * (n + 1) > slots.length) {
                grow();
            }
            int h = mix(id.hashCode());
            int at = slotOf(id, h);
            if (slots[at] != 0) {
                return slots[at] - 1;
            }
            if (n == hashes.length) {
                hashes = Arrays.copyOf(hashes, 2 * n);
            }
            ids.add(id);
            hashes[n] = h;
            slots[at] = n + 1;
            return -1;
        }

        /** The position of {@code id}, or -1; nothing is appended. */
        int indexOf(String id) {
            return slots[slotOf(id, mix(id.hashCode()))] - 1; // an empty slot holds 0
        }

        /** The slot that holds {@code id} (of mixed hash {@code h}), or the empty one where it would go. */
        private int slotOf(String id, int h) {
            int mask = slots.length - 1;
            int at = h & mask;
            for (int slot; (slot = slots[at]) != 0; at = (at + 1) & mask) {
                if (hashes[slot - 1] == h && ids.get(slot - 1).equals(id)) {
                    break;
                }
            }
            return at;
        }

        private void grow() {
            int[] bigger = new int[slots.length * 2];
            int mask = bigger.length - 1;
            for (int slot : slots) {
                if (slot != 0) {
                    int at = hashes[slot - 1] & mask;
                    while (bigger[at] != 0) {
                        at = (at + 1) & mask;
                    }
                    bigger[at] = slot;
                }
            }
            slots = bigger;
        }

        /**
         * The index over {@code copy}, the ids as they are now (a copy, or the same list, which nothing appends to once
         * frozen); no id can be added after.
         */
        IdIndex frozen(List<String> copy) {
            if (copy.size() != ids.size()) {
                throw new IllegalArgumentException(copy.size() + " ids frozen of " + ids.size());
            }
            frozen = true;
            return new IdIndex(copy, slots);
        }
    }
}
