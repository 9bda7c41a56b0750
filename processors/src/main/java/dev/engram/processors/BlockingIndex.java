package dev.engram.processors;

import dev.engram.stores.BlockKeys;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * SEARCH for entity resolution, within one record: every surface is filed under its blocking keys — its loose form,
 * declared aliases, acronym and initials, name tokens and locality-sensitive hashes of its "name: description"
 * embedding (see {@link BlockKeys}) — so that the candidates for a surface are found by a few prefix scans of the
 * index store, never by scanning all entities. A block of more than {@link #BLOCK_CAP} surfaces does not discriminate
 * and is skipped (and counted).
 */
final class BlockingIndex {

    /** Blocks larger than this do not discriminate and are skipped (and counted). */
    static final int BLOCK_CAP = 64;

    private final MemoryTransaction tx;
    private final Runnable skipped;
    /** The candidates of each surface asked about; memory does not change while pairs are decided. */
    private final Map<String, Set<String>> candidateSets = new HashMap<>();

    /** An index over the transaction's stores; {@code skipped} counts the blocks too large to discriminate. */
    BlockingIndex(MemoryTransaction tx, Runnable skipped) {
        this.tx = tx;
        this.skipped = skipped;
    }

    /** The blocking keys of a surface: loose form, aliases, acronym and initials, tokens, embedding hashes. */
    static Set<String> blockKeys(EntityRecord e) {
        Set<String> keys = new TreeSet<>();
        keys.add(BlockKeys.loose(NameForms.loose(e.normalized())));
        keys.add(BlockKeys.name(e.normalized()));
        e.aliases().keySet().forEach(a -> keys.add(BlockKeys.name(a)));
        String acronym = NameForms.asAcronym(e.normalized(), e.name());
        if (acronym != null) {
            keys.add(BlockKeys.shortForm(acronym));
        }
        NameForms.initials(e.normalized()).forEach(i -> keys.add(BlockKeys.shortForm(i)));
        NameForms.blockingTokens(e.normalized()).forEach(t -> keys.add(BlockKeys.token(t)));
        for (int band = 0; band < e.lsh().size(); band++) {
            keys.add(BlockKeys.embedding(band, e.lsh().get(band)));
        }
        return keys;
    }

    /**
     * Files a surface under the keys it has now ({@code after}, null when it left memory) instead of those it had
     * ({@code before}, null when it is new); returns the surfaces of every block that crossed {@link #BLOCK_CAP}
     * either way, whose candidates changed.
     */
    Set<String> reindex(String sid, EntityRecord before, EntityRecord after) {
        Set<String> oldKeys = before == null ? Set.of() : blockKeys(before);
        Set<String> newKeys = after == null ? Set.of() : blockKeys(after);
        Set<String> crossed = new TreeSet<>();
        for (String k : oldKeys) {
            if (!newKeys.contains(k)) {
                tx.index().delete(Keys.of(tx.namespace(), k, sid));
                if (members(k, BLOCK_CAP + 1).size() == BLOCK_CAP) {
                    crossed.addAll(members(k, Integer.MAX_VALUE)); // the block discriminates again
                }
            }
        }
        for (String k : newKeys) {
            if (!oldKeys.contains(k)) {
                tx.index().put(Keys.of(tx.namespace(), k, sid), after.normalized());
                if (members(k, BLOCK_CAP + 2).size() == BLOCK_CAP + 1) {
                    crossed.addAll(members(k, Integer.MAX_VALUE)); // the block stopped discriminating
                }
            }
        }
        return crossed;
    }

    /** The surfaces in a block, or none when the block is too large to discriminate. */
    List<String> block(String key) {
        List<String> out = members(key, BLOCK_CAP + 1);
        if (out.size() > BLOCK_CAP) {
            skipped.run();
            return List.of();
        }
        return out;
    }

    /** Up to {@code limit} surfaces of a block, in id order. */
    List<String> members(String key, int limit) {
        List<String> out = new ArrayList<>();
        try (KeyValueIterator<String, String> it = tx.index().prefixScan(Keys.prefix(tx.namespace(), key))) {
            while (it.hasNext() && out.size() < limit) {
                out.add(Keys.last(it.next().key));
            }
        }
        return out;
    }

    /** The surfaces sharing a block with {@code e} (itself included), skipping blocks too large to discriminate. */
    Set<String> candidates(EntityRecord e) {
        return candidateSets.computeIfAbsent(e.id(), id -> {
            Set<String> out = new TreeSet<>();
            for (String key : blockKeys(e)) {
                out.addAll(block(key));
            }
            return out;
        });
    }

    /** Random-hyperplane hashes of an embedding, fixed by a seed so that every instance computes the same. */
    static final class Lsh {
        private static final int BANDS = 4;
        private static final int BITS = 12;
        private static final Map<Integer, float[][]> PLANES = new ConcurrentHashMap<>();

        private Lsh() {}

        /** The bucket of every band, or none without a vector. */
        static List<Integer> buckets(float[] v) {
            if (v == null || v.length == 0) {
                return List.of();
            }
            List<Integer> out = new ArrayList<>();
            for (int band = 0; band < BANDS; band++) {
                out.add(bucket(v, band));
            }
            return out;
        }

        static int bucket(float[] v, int band) {
            float[][] planes = PLANES.computeIfAbsent(v.length, Lsh::planes);
            int bucket = 0;
            for (int bit = 0; bit < BITS; bit++) {
                float[] plane = planes[band * BITS + bit];
                double dot = 0;
                for (int i = 0; i < v.length; i++) {
                    dot += plane[i] * v[i];
                }
                bucket = (bucket << 1) | (dot >= 0 ? 1 : 0);
            }
            return bucket;
        }

        private static float[][] planes(int dimensions) {
            Random random = new Random(0x5eedL);
            float[][] planes = new float[BANDS * BITS][dimensions];
            for (float[] plane : planes) {
                for (int i = 0; i < dimensions; i++) {
                    plane[i] = (float) random.nextGaussian();
                }
            }
            return planes;
        }
    }
}
