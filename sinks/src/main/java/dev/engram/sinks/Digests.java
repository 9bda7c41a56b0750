package dev.engram.sinks;

import dev.engram.schemas.MirrorDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/** Bucketed digests of (id, version) sets and the drift between two of them (see {@link MirrorDigest}). */
public final class Digests {

    private Digests() {}

    /** How many objects fall in a bucket, and the sum of their (id, version) hashes. */
    public record Bucket(long count, long sum) {
        Bucket plus(String id, long version) {
            return new Bucket(count + 1, sum + MirrorDigest.hash(id, version));
        }
    }

    /** What one mirror holds differently from memory, by object id. */
    public record Drift(List<String> missing, List<String> stale, List<String> orphaned) {
        public Drift {
            missing = List.copyOf(missing);
            stale = List.copyOf(stale);
            orphaned = List.copyOf(orphaned);
        }

        public boolean none() {
            return missing.isEmpty() && stale.isEmpty() && orphaned.isEmpty();
        }

        public int size() {
            return missing.size() + stale.size() + orphaned.size();
        }
    }

    /** The digests of an (id → version) map, by bucket. */
    public static Map<Integer, Bucket> of(Map<String, Long> versions) {
        Map<Integer, Bucket> out = new HashMap<>();
        versions.forEach((id, version) -> out.merge(
                MirrorDigest.bucket(id),
                new Bucket(0, 0).plus(id, version),
                (a, b) -> new Bucket(a.count() + b.count(), a.sum() + b.sum())));
        return out;
    }

    /** The buckets whose digests differ. */
    public static TreeSet<Integer> differing(Map<Integer, Bucket> a, Map<Integer, Bucket> b) {
        TreeSet<Integer> out = new TreeSet<>();
        for (int i = 0; i < MirrorDigest.BUCKETS; i++) {
            if (!Objects.equals(a.getOrDefault(i, new Bucket(0, 0)), b.getOrDefault(i, new Bucket(0, 0)))) {
                out.add(i);
            }
        }
        return out;
    }

    /** Ids memory holds that the mirror lacks, holds at another version, or holds though memory does not. */
    public static Drift compare(Map<String, Long> memory, Map<String, Long> mirror) {
        List<String> missing = new ArrayList<>();
        List<String> stale = new ArrayList<>();
        List<String> orphaned = new ArrayList<>();
        for (String id : new TreeSet<>(memory.keySet())) {
            Long held = mirror.get(id);
            if (held == null) {
                missing.add(id);
            } else if (!held.equals(memory.get(id))) {
                stale.add(id);
            }
        }
        for (String id : new TreeSet<>(mirror.keySet())) {
            if (!memory.containsKey(id)) {
                orphaned.add(id);
            }
        }
        return new Drift(missing, stale, orphaned);
    }
}
