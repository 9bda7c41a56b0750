package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a namespace's HNSW index holds, per kind and key: each vector's fingerprint. Sorts a snapshot's vectors out
 * (searched exactly or indexed, fingerprinted), compares them with what the index holds (what to write, to delete and
 * to leave out of graph searches), and takes in what a write published. Not thread-safe: {@link HnswVectors} calls it
 * under its lock.
 */
final class KnownVectors {

    /**
     * The vectors of one kind the index holds, by key: each one's fingerprint, the last comparison whose snapshot had it,
     * and the arena and handle last seen with these values (no arena when read back from disk): a later snapshot
     * passing the very same handle of the same arena is known to hold the same values without reading them again, since
     * a value once appended to an arena is never changed and a handle never reused within it.
     *
     * <p>Kept in parallel arrays, a vector at a position, found by key through an open-addressing table of positions:
     * about 50 bytes a vector, where a map of entries takes twice that, and an index holds several vectors a passage.
     * Positions change only when vectors are added or removed ({@link #put}, {@link #remove}).
     */
    static final class Known {
        private String[] keys = new String[8];
        private long[] prints = new long[8];
        private long[] seen = new long[8];
        private VectorArena[] arenas = new VectorArena[8];
        private long[] handles = new long[8];
        private int size;
        /** Position + 1 per slot, 0 for an empty one; a power of two at least twice as long as the positions. */
        private int[] slots = new int[16];

        int size() {
            return size;
        }

        /** The position of {@code key}, or -1. */
        int find(String key) {
            int mask = slots.length - 1;
            for (int at = home(key, mask); ; at = (at + 1) & mask) {
                int slot = slots[at];
                if (slot == 0) {
                    return -1;
                }
                if (keys[slot - 1].equals(key)) {
                    return slot - 1;
                }
            }
        }

        /** Holds {@code key} with these values; whether it is new. */
        boolean put(String key, long fingerprint, VectorArena arena, long handle) {
            int at = find(key);
            boolean added = at < 0;
            if (added) {
                if (size == keys.length) {
                    grow();
                }
                at = size++;
                keys[at] = key;
                seen[at] = 0; // never seen by a comparison yet, whatever was at this position before
                slots[free(key)] = at + 1;
            }
            prints[at] = fingerprint;
            arenas[at] = arena;
            handles[at] = handle;
            return added;
        }

        /** Lets go of {@code key}; whether it was held. The last position moves into its place. */
        boolean remove(String key) {
            int mask = slots.length - 1;
            int at = home(key, mask);
            while (slots[at] != 0 && !keys[slots[at] - 1].equals(key)) {
                at = (at + 1) & mask;
            }
            if (slots[at] == 0) {
                return false;
            }
            int position = slots[at] - 1;
            // empty the slot, moving later slots of the same run back so that every key stays reachable from its home
            for (int gap = at, next = (at + 1) & mask; ; next = (next + 1) & mask) {
                slots[gap] = 0;
                while (slots[next] != 0 && !movable(home(keys[slots[next] - 1], mask), gap, next)) {
                    next = (next + 1) & mask;
                }
                if (slots[next] == 0) {
                    break;
                }
                slots[gap] = slots[next];
                gap = next;
            }
            int last = --size;
            if (position != last) {
                int lastAt = home(keys[last], mask);
                while (slots[lastAt] != last + 1) {
                    lastAt = (lastAt + 1) & mask;
                }
                slots[lastAt] = position + 1;
                keys[position] = keys[last];
                prints[position] = prints[last];
                seen[position] = seen[last];
                arenas[position] = arenas[last];
                handles[position] = handles[last];
            }
            keys[last] = null;
            arenas[last] = null;
            if (keys.length > 64 && size <= keys.length / 4) {
                resize(Math.max(8, 2 * size)); // after mass deletions: a quarter full at most, half full after
            }
            return true;
        }

        /** How many vectors the arrays have room for: what they take on the heap. */
        int capacity() {
            return keys.length;
        }

        /** Whether a key at {@code at}, whose home is {@code home}, may move back to the gap: its home is not past it. */
        private static boolean movable(int home, int gap, int at) {
            return gap <= at ? home <= gap || home > at : home <= gap && home > at;
        }

        String key(int position) {
            return keys[position];
        }

        long fingerprint(int position) {
            return prints[position];
        }

        /** Whether the batch's vector {@code i} is the one last seen at {@code position}: the same handle and arena. */
        boolean sameAs(int position, Vectors vectors, int i) {
            return arenas[position] == vectors.arena() && handles[position] == vectors.handle(i);
        }

        /**
         * The vector at {@code position} is the batch's vector {@code i}, with the same values, in comparison {@code
         * stamp}: the next plan knows them by this handle, and the key is kept as the batch's string.
         */
        void seenAs(int position, VectorIndexer.Batch b, int i, long stamp) {
            arenas[position] = b.vectors().arena();
            handles[position] = b.vectors().handle(i);
            keys[position] = b.keys().get(i);
            seen[position] = stamp;
        }

        void seen(int position, long stamp) {
            seen[position] = stamp;
        }

        long seen(int position) {
            return seen[position];
        }

        private int free(String key) {
            int mask = slots.length - 1;
            int at = home(key, mask);
            while (slots[at] != 0) {
                at = (at + 1) & mask;
            }
            return at;
        }

        private void grow() {
            resize(keys.length + (keys.length >> 1));
        }

        /** Arrays of {@code capacity} (at least the size), and a table of positions at least twice as long. */
        private void resize(int capacity) {
            keys = Arrays.copyOf(keys, capacity);
            prints = Arrays.copyOf(prints, capacity);
            seen = Arrays.copyOf(seen, capacity);
            arenas = Arrays.copyOf(arenas, capacity);
            handles = Arrays.copyOf(handles, capacity);
            int table = Integer.highestOneBit(2 * capacity - 1) << 1;
            if (slots.length != table) {
                slots = new int[table];
                for (int p = 0; p < size; p++) {
                    slots[free(keys[p])] = p + 1;
                }
            }
        }

        private static int home(String key, int mask) {
            int h = key.hashCode() * 0x9E3779B9;
            return (h ^ (h >>> 16)) & mask;
        }
    }

    /**
     * A snapshot's vectors sorted out: the batches searched exactly, and for the ones to index their width, each
     * vector's fingerprint and whether it can be indexed (present and finite).
     */
    record Plan(
            long number,
            List<VectorIndexer.Batch> batches,
            Map<String, VectorIndex> exact,
            Map<VectorIndexer.Batch, Integer> widths,
            Map<VectorIndexer.Batch, long[]> prints,
            Map<VectorIndexer.Batch, boolean[]> usable) {}

    /**
     * How a plan differs from the index's reader of {@code generation}: per indexed batch, the positions of the vectors
     * to write (new or changed); per kind, the keys to delete; and per indexed kind, the keys whose vector in the
     * reader is no longer the snapshot's (changed or deleted), which its graph searches leave out.
     */
    record Diff(
            long generation,
            Map<VectorIndexer.Batch, int[]> writes,
            Map<String, List<String>> deletes,
            Map<String, List<String>> stale,
            int most) {

        int changes() {
            int n = 0;
            for (int[] w : writes.values()) {
                n += w.length;
            }
            for (List<String> d : deletes.values()) {
                n += d.size();
            }
            return n;
        }
    }

    /**
     * The positions in {@link Known} a plan found for the vectors of each indexed batch (-1: none), good for a comparison
     * while the index's generation is still {@code generation}: each vector's key is then looked up once per snapshot.
     */
    record Found(long generation, Map<VectorIndexer.Batch, int[]> byBatch) {}

    private final int minVectors;
    /**
     * Per kind, per key: what the index's current reader holds for each vector (keys are not joined to their kind per
     * snapshot). Changed only when a write of changes is published, with the reader.
     */
    private final Map<String, Known> entries = new HashMap<>();
    /** Comparisons with the entries made: stamps which entries the last one still had. */
    private long syncs;
    /** Publications of written changes (and reopenings): a comparison made before the last one is out of date. */
    private long generation;

    private int size;
    /** Snapshots planned: a write of changes supersedes any plan made before it. */
    private long plans;
    /** Kinds indexed now: a kind stays indexed until it shrinks below half the threshold (no flapping around it). */
    private final Set<String> indexedKinds = new HashSet<>();

    /** @param minVectors the size from which a kind is indexed */
    KnownVectors(int minVectors) {
        this.minVectors = minVectors;
    }

    /** Vectors indexed now. */
    int size() {
        return size;
    }

    long generation() {
        return generation;
    }

    /** An empty record of what a plan finds, for a comparison at the current generation. */
    Found found() {
        return new Found(generation, new HashMap<>());
    }

    Plan plan(List<VectorIndexer.Batch> batches, Found found) {
        Map<String, VectorIndex> out = new LinkedHashMap<>();
        Map<VectorIndexer.Batch, Integer> widths = new LinkedHashMap<>();
        // each vector's fingerprint, and whether it can be indexed: one pass over its values for both
        Map<VectorIndexer.Batch, long[]> prints = new HashMap<>();
        Map<VectorIndexer.Batch, boolean[]> usable = new HashMap<>();
        for (VectorIndexer.Batch b : batches) {
            int threshold = indexedKinds.contains(b.kind()) ? Math.max(1, minVectors / 2) : minVectors;
            if (b.vectors().size() < threshold) { // searched exactly whatever its vectors are: nothing to fingerprint
                out.put(b.kind(), VectorIndex.exact(b.vectors()));
                continue;
            }
            int dim = uniformDimension(b.vectors());
            int count = 0;
            long[] fp = new long[b.vectors().size()];
            boolean[] ok = new boolean[fp.length];
            Known known = entries.get(b.kind());
            int[] looked = new int[fp.length];
            found.byBatch().put(b, looked);
            float[] v = new float[Math.max(0, dim)];
            for (int i = 0; i < ok.length; i++) {
                boolean present = b.vectors().has(i);
                int entry = !present || known == null ? -1 : known.find(b.keys().get(i));
                looked[i] = entry;
                if (entry >= 0 && known.sameAs(entry, b.vectors(), i)) {
                    fp[i] = known.fingerprint(entry); // the vector fingerprinted before (and finite, as it was indexed)
                    ok[i] = true;
                } else if (present && dim > 0) {
                    b.vectors().read(i, v);
                    ok[i] = fingerprint(v, fp, i); // a non-finite vector is never found
                } else {
                    ok[i] = false; // missing, or of mixed widths (the kind is then scanned, not indexed)
                }
                count += ok[i] ? 1 : 0;
            }
            prints.put(b, fp);
            usable.put(b, ok);
            if (count < threshold || dim <= 0 || dim > EngramHnswFormat.MAX_DIMENSIONS) {
                out.put(b.kind(), VectorIndex.exact(b.vectors()));
            } else {
                widths.put(b, dim);
            }
        }
        indexedKinds.clear();
        widths.keySet().forEach(b -> indexedKinds.add(b.kind()));
        return new Plan(++plans, batches, out, widths, prints, usable);
    }

    /**
     * Compares a plan with what the index's reader holds now; {@code found}: what the plan found, used if the index has
     * not changed since (null: look again).
     */
    Diff diff(Plan plan, Found found) {
        Map<VectorIndexer.Batch, int[]> lookedUp =
                found != null && found.generation() == generation ? found.byBatch() : Map.of();
        long stamp = ++syncs;
        Map<VectorIndexer.Batch, int[]> writes = new LinkedHashMap<>();
        Map<String, List<String>> stale = new HashMap<>();
        Map<String, Integer> perKind = new HashMap<>();
        for (Map.Entry<VectorIndexer.Batch, Integer> e : plan.widths().entrySet()) {
            VectorIndexer.Batch b = e.getKey();
            boolean[] ok = plan.usable().get(b);
            long[] fp = plan.prints().get(b);
            Known known = entries.get(b.kind());
            int[] looked = lookedUp.get(b);
            int[] w = new int[ok.length];
            int n = 0;
            for (int i = 0; i < ok.length; i++) {
                if (!ok[i]) {
                    continue;
                }
                int entry = known == null
                        ? -1
                        : looked != null ? looked[i] : known.find(b.keys().get(i));
                if (entry < 0 || known.fingerprint(entry) != fp[i]) {
                    w[n++] = i;
                    if (entry >= 0) {
                        stale.computeIfAbsent(b.kind(), k -> new ArrayList<>())
                                .add(b.keys().get(i));
                        known.seen(entry, stamp);
                    }
                } else {
                    known.seenAs(entry, b, i, stamp); // the same values: the next plan knows them by this handle
                }
            }
            writes.put(b, Arrays.copyOf(w, n));
            perKind.merge(b.kind(), n, Integer::sum);
        }
        // what this snapshot no longer has, including every vector of a kind it searches exactly now
        Set<String> graphs = new HashSet<>();
        plan.widths().keySet().forEach(b -> graphs.add(b.kind()));
        Map<String, List<String>> deletes = new HashMap<>();
        for (Map.Entry<String, Known> kind : entries.entrySet()) {
            Known known = kind.getValue();
            for (int p = 0; p < known.size(); p++) {
                if (known.seen(p) != stamp) {
                    deletes.computeIfAbsent(kind.getKey(), k -> new ArrayList<>())
                            .add(known.key(p));
                    if (graphs.contains(kind.getKey())) {
                        stale.computeIfAbsent(kind.getKey(), k -> new ArrayList<>())
                                .add(known.key(p));
                    }
                }
            }
        }
        deletes.forEach((kind, keys) -> perKind.merge(kind, keys.size(), Integer::sum));
        int most = perKind.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        return new Diff(generation, writes, deletes, stale, most);
    }

    /** The diff of a plan with the index that holds it: nothing to write, at the current generation. */
    Diff written(Plan plan) {
        Map<VectorIndexer.Batch, int[]> none = new LinkedHashMap<>();
        plan.widths().keySet().forEach(b -> none.put(b, new int[0]));
        return new Diff(generation, none, Map.of(), Map.of(), 0);
    }

    /** Takes in a diff's changes, written and published with a new reader: a new generation. */
    void published(Plan plan, Diff d) {
        for (Map.Entry<VectorIndexer.Batch, int[]> e : d.writes().entrySet()) {
            VectorIndexer.Batch b = e.getKey();
            long[] fp = plan.prints().get(b);
            Known known = entries.computeIfAbsent(b.kind(), k -> new Known());
            for (int i : e.getValue()) {
                if (known.put(
                        b.keys().get(i), fp[i], b.vectors().arena(), b.vectors().handle(i))) {
                    size++;
                }
            }
        }
        for (Map.Entry<String, List<String>> e : d.deletes().entrySet()) {
            Known known = entries.get(e.getKey());
            if (known == null) {
                continue;
            }
            for (String key : e.getValue()) {
                if (known.remove(key)) {
                    size--;
                }
            }
            if (known.size() == 0) {
                entries.remove(e.getKey());
            }
        }
        generation++;
    }

    /** What an index just opened holds ({@code count} vectors in all): a new generation. */
    void loaded(Map<String, Known> loaded, int count) {
        entries.clear();
        entries.putAll(loaded);
        size = count;
        generation++; // what any earlier comparison was made against is gone
    }

    /** The index is let go of: nothing is known to be in it, and no kind is indexed. */
    void forget() {
        entries.clear();
        size = 0;
        indexedKinds.clear();
        generation++;
    }

    private static int uniformDimension(Vectors vectors) {
        int dim = 0;
        for (int i = 0; i < vectors.size(); i++) {
            if (!vectors.has(i)) {
                continue;
            }
            if (dim == 0) {
                dim = vectors.length(i);
            } else if (vectors.length(i) != dim) {
                return -1;
            }
        }
        return dim;
    }

    /**
     * FNV-1a over the float bits, which tells a changed vector from an unchanged one, into {@code out[at]}; and whether
     * every value is finite (a vector that is not is never indexed), in the same pass over the values.
     */
    static boolean fingerprint(float[] v, long[] out, int at) {
        long h = 0xcbf29ce484222325L ^ v.length;
        boolean finite = true;
        for (float x : v) {
            int bits = Float.floatToIntBits(x);
            finite &= (bits & 0x7f800000) != 0x7f800000; // all exponent bits set: infinite or NaN
            h ^= bits;
            h *= 0x100000001b3L;
        }
        out[at] = h;
        return finite;
    }
}
