package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

class TermCacheTest {

    /** Decodes a packed count into "term×count" pairs. */
    private static String pairs(byte[] c) {
        int[] terms = new int[TermCache.Counted.distinct(c)];
        int[] counts = new int[terms.length];
        assertThat(TermCache.Counted.decode(c, terms, counts)).isEqualTo(terms.length);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < terms.length; i++) {
            sb.append(terms[i]).append('×').append(counts[i]).append(' ');
        }
        return sb.toString().strip();
    }

    @Test
    void countsArePackedAndReadBackExactlyAcrossEveryWidthOfAVariableLengthNumber() {
        // ids on both sides of each seven-bit boundary (the first gap is an id), a count past one byte, the largest id
        int[] tokens = {
            0, 0, 0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455, 268_435_456, Integer.MAX_VALUE
        };
        int[] many = new int[tokens.length + 300];
        System.arraycopy(tokens, 0, many, 0, tokens.length);
        Arrays.fill(many, tokens.length, many.length, 128); // 128 occurs 301 times
        Arrays.sort(many);
        byte[] c = TermCache.Counted.pack(many, many.length);

        // what a cache holds is the bytes alone, read back from them
        assertThat(TermCache.Counted.distinct(c)).isEqualTo(10);
        assertThat(TermCache.Counted.length(c)).isEqualTo(many.length);
        assertThat(pairs(c))
                .isEqualTo("0×3 127×1 128×301 16383×1 16384×1 2097151×1 2097152×1 268435455×1 268435456×1"
                        + " 2147483647×1");
    }

    @Test
    void countsCutShortAreRefused() {
        byte[] c = TermCache.Counted.pack(new int[] {1, 1, 300}, 3);
        byte[] cut = Arrays.copyOf(c, 1);
        assertThatThrownBy(() -> TermCache.Counted.length(cut)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TermCache.Counted.distinct(new byte[0])).isInstanceOf(IllegalArgumentException.class);
        // a number longer than an int's five bytes
        byte[] endless = {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 1};
        assertThatThrownBy(() -> TermCache.Counted.distinct(endless)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anEmptyTextHasNoTerms() {
        byte[] c = TermCache.Counted.pack(new int[4], 0);
        assertThat(TermCache.Counted.distinct(c)).isZero();
        assertThat(TermCache.Counted.length(c)).isZero();
        assertThat(pairs(c)).isEmpty();
    }

    @Test
    void randomTextsReadBackAsTheirSortedRunsAndTakeFarLessThanTwoIntArrays() {
        Random r = new Random(11);
        for (int n = 0; n < 200; n++) {
            int tokens = r.nextInt(400);
            int[] ids = new int[tokens];
            for (int i = 0; i < tokens; i++) {
                ids[i] = r.nextInt(1 + r.nextInt(200_000));
            }
            Arrays.sort(ids);
            StringBuilder expected = new StringBuilder();
            int distinct = 0;
            for (int i = 0; i < tokens; ) {
                int end = i;
                while (end < tokens && ids[end] == ids[i]) {
                    end++;
                }
                expected.append(ids[i]).append('×').append(end - i).append(' ');
                distinct++;
                i = end;
            }
            byte[] c = TermCache.Counted.pack(ids, tokens);
            assertThat(pairs(c)).isEqualTo(expected.toString().strip());
            assertThat(TermCache.Counted.distinct(c)).isEqualTo(distinct);
            assertThat(TermCache.Counted.length(c)).isEqualTo(tokens);
            // at most five bytes a term and one a count below 128, against eight bytes a term in two int arrays
            assertThat((long) c.length).isLessThanOrEqualTo(10 + 7L * distinct);
        }
    }

    @Test
    void countsReadInPlaceFromABufferMatchTheArrayAndRefuseToReadPastTheirEnd() {
        byte[] c = TermCache.Counted.pack(new int[] {3, 3, 9, 400}, 4);
        ByteBuffer shared = ByteBuffer.allocate(c.length + 10);
        shared.put(5, c);
        int[] terms = new int[3];
        int[] counts = new int[3];
        assertThat(TermCache.Counted.decode(shared, 5, 5 + c.length, terms, counts))
                .isEqualTo(3);
        assertThat(terms).containsExactly(3, 9, 400);
        assertThat(counts).containsExactly(2, 1, 1);
        assertThat(TermCache.Counted.length(shared, 5, 5 + c.length)).isEqualTo(4);
        assertThat(shared.position()).as("absolute reads only").isZero();
        // the same bytes cut short by the end given: the decoder stops there rather than reading what follows
        assertThatThrownBy(() -> TermCache.Counted.decode(shared, 5, 5 + c.length - 1, terms, counts))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void handlesFindEveryKeyByIdentityThroughGrowthAndNeverAnEqualObject() {
        TermCache.Handles h = new TermCache.Handles(0);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            keys.add(new String("k" + (i % 100))); // equal strings, distinct objects
        }
        for (int i = 0; i < keys.size(); i++) {
            assertThat(h.putIfAbsent(keys.get(i), i)).isTrue();
        }
        assertThat(h.putIfAbsent(keys.get(7), 99)).as("held already").isFalse();
        assertThat(h.size()).isEqualTo(5_000);
        for (int i = 0; i < keys.size(); i++) {
            assertThat(h.get(keys.get(i))).isEqualTo(i);
        }
        assertThat(h.get(new String("k7"))).isEqualTo(TermCache.ABSENT);
        long[] sum = {0};
        h.forEach((k, v) -> sum[0] += v);
        assertThat(sum[0]).isEqualTo(5_000L * 4_999 / 2);
    }

    /**
     * The counts of kept texts live in the arena the builds give, not in the heap; what a build no longer uses is
     * counted as the arena's garbage; a build in another arena (vectors compacted) reads every text again; a closed
     * arena is never appended to.
     */
    @Test
    void countsLiveInTheBuildsArenaAndWhatIsNoLongerUsedIsItsGarbage() {
        VectorArena arena = VectorArena.onHeap();
        TermCache cache = new TermCache();
        List<String> texts = new ArrayList<>(List.of("alpha beta", "beta gamma gamma", "delta"));
        int[] reads = {0};
        Runnable build = () -> {
            List<String> now = List.copyOf(texts);
            cache.begin(arena);
            new Bm25(
                    now.size(),
                    d -> {
                        reads[0]++;
                        return now.get(d);
                    },
                    now::get,
                    cache,
                    1.2,
                    0.75);
            cache.built(10);
        };
        build.run();
        assertThat(reads[0]).isEqualTo(3);
        long floats = arena.floats();
        assertThat(floats).as("three texts' counts in the arena").isPositive();
        assertThat(arena.garbage()).isZero();

        texts.set(2, "epsilon"); // a text replaced: its old counts are garbage once the build is over
        build.run();
        assertThat(reads[0]).isEqualTo(4);
        assertThat(arena.garbage()).isPositive();

        // the arena compacted: the counts move with the vectors, and the next build reads nothing again
        VectorArena compacted = VectorArena.onHeap();
        cache.movedTo(arena, compacted);
        long before = arena.floats();
        List<String> now = List.copyOf(texts);
        int[] readsNow = {0};
        IntFunction<String> counting = d -> {
            readsNow[0]++;
            return now.get(d);
        };
        cache.begin(compacted);
        Bm25 moved = new Bm25(now.size(), counting, now::get, cache, 1.2, 0.75);
        cache.built(10);
        assertThat(readsNow[0]).isZero();
        assertThat(arena.floats()).as("nothing more appended to the old arena").isEqualTo(before);
        assertThat(moved.scores("gamma")).containsExactly(new Bm25(now, 1.2, 0.75).scores("gamma"));

        // a build in an arena the counts were not moved to reads every text again
        VectorArena other = VectorArena.onHeap();
        cache.begin(other);
        Bm25 again = new Bm25(now.size(), counting, now::get, cache, 1.2, 0.75);
        cache.built(10);
        assertThat(readsNow[0]).isEqualTo(3);
        assertThat(other.floats()).isPositive();
        assertThat(again.scores("gamma")).containsExactly(new Bm25(now, 1.2, 0.75).scores("gamma"));

        other.close();
        cache.begin(other);
        Bm25 closing = new Bm25(now.size(), now::get, now::get, cache, 1.2, 0.75);
        cache.built(10);
        assertThat(closing.scores("beta")).containsExactly(new Bm25(now, 1.2, 0.75).scores("beta"));

        // an arena closed under a build (the loader closing): the counts it could not take serve that build only
        VectorArena closedUnder = VectorArena.onHeap();
        cache.begin(closedUnder);
        closedUnder.close();
        List<String> fresh = List.of("zeta eta", "eta theta");
        Bm25 under = new Bm25(fresh.size(), fresh::get, fresh::get, cache, 1.2, 0.75);
        cache.built(10);
        assertThat(under.scores("eta")).containsExactly(new Bm25(fresh, 1.2, 0.75).scores("eta"));
    }
}
