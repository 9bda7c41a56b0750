package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Vectors appended once and read by handle, on the heap or in a mapped scratch file. */
class VectorArenaTest {

    @TempDir
    Path dir;

    private static float[] vector(Random random, int length) {
        float[] v = new float[length];
        for (int i = 0; i < length; i++) {
            v[i] = random.nextFloat() - 0.5f;
        }
        return v;
    }

    private List<VectorArena> arenas() {
        return List.of(VectorArena.onHeap(), VectorArena.mapped(dir, "ns"));
    }

    @Test
    void everyVectorReadsBackAsAddedAcrossChunksOfGrowingSize() {
        for (VectorArena arena : arenas()) {
            Random random = new Random(7);
            List<float[]> added = new ArrayList<>();
            List<Long> handles = new ArrayList<>();
            // 384 values each: ~ 6 MiB in all, over chunks of 64 KiB, 128 KiB, ...; odd lengths leave chunk tails
            // unused
            for (int i = 0; i < 4_000; i++) {
                float[] v = vector(random, i % 97 == 0 ? 1_000 : 384);
                added.add(v);
                handles.add(arena.add(v));
            }
            for (int i = 0; i < added.size(); i++) {
                assertThat(arena.get(handles.get(i))).isEqualTo(added.get(i));
                assertThat(VectorArena.length(handles.get(i))).isEqualTo(added.get(i).length);
            }
            assertThat(arena.floats())
                    .isEqualTo(added.stream().mapToLong(v -> v.length).sum());
            arena.close();
        }
    }

    @Test
    void bytesReadBackAsAddedAmongVectorsAcrossChunksAndAreCountedAsValues() {
        for (VectorArena arena : arenas()) {
            Random random = new Random(3);
            List<byte[]> added = new ArrayList<>();
            List<Long> handles = new ArrayList<>();
            List<Long> vectors = new ArrayList<>();
            long floats = 0;
            for (int i = 0; i < 3_000; i++) {
                // lengths of every remainder by four, none at all, and some far past a first chunk of 64 KiB
                byte[] b = new byte[i % 500 == 0 ? 100_003 : i % 7];
                random.nextBytes(b);
                added.add(b);
                long h = arena.addBytes(b);
                handles.add(h);
                floats += 1 + (b.length + 3) / 4;
                assertThat(VectorArena.length(h)).isEqualTo(1 + (b.length + 3) / 4);
                vectors.add(arena.add(vector(random, 5)));
                floats += 5;
            }
            for (int i = 0; i < added.size(); i++) {
                assertThat(arena.bytes(handles.get(i))).isEqualTo(added.get(i));
                assertThat(VectorArena.length(vectors.get(i))).isEqualTo(5);
            }
            assertThat(arena.floats()).isEqualTo(floats);
            arena.retire(handles.get(1));
            assertThat(arena.garbage()).isEqualTo((1 + 1) / (double) floats);
            assertThatThrownBy(() -> arena.bytes(VectorArena.NONE)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> arena.addBytes(new byte[4 * VectorArena.MAX_LENGTH]))
                    .isInstanceOf(IllegalArgumentException.class);
            byte[] longest = new byte[4 * (VectorArena.MAX_LENGTH - 1)];
            longest[longest.length - 1] = 9;
            assertThat(arena.bytes(arena.addBytes(longest))).isEqualTo(longest);
            arena.close();
            assertThatThrownBy(() -> arena.addBytes(new byte[1])).isInstanceOf(IllegalStateException.class);
            assertThat(arena.bytes(handles.get(2))).isEqualTo(added.get(2));
        }
    }

    @Test
    void noVectorIsTheNoneHandleAndAnEmptyOneHasNoValues() {
        VectorArena arena = VectorArena.onHeap();
        assertThat(arena.add(null)).isEqualTo(VectorArena.NONE);
        assertThat(arena.get(VectorArena.NONE)).isNull();
        assertThat(VectorArena.length(VectorArena.NONE)).isZero();
        float[] into = {5f};
        arena.read(VectorArena.NONE, into); // reads nothing
        assertThat(into).containsExactly(5f);
        long empty = arena.add(new float[0]);
        assertThat(empty).isNotEqualTo(VectorArena.NONE);
        assertThat(arena.get(empty)).isEmpty();
    }

    /**
     * A chunk filled to its last value: an empty vector after it takes no room, and the next vector starts the next
     * chunk; every handle reads back its own values.
     */
    @Test
    void aFullChunkIsFollowedByEmptyVectorsAndANewChunk() {
        for (VectorArena arena : arenas()) {
            List<float[]> added = new ArrayList<>();
            List<Long> handles = new ArrayList<>();
            for (int i = 0; i < 16; i++) { // 16 × 1,024 values: exactly the first chunk (16 Ki values)
                float[] v = new float[1024];
                Arrays.fill(v, i);
                added.add(v);
                handles.add(arena.add(v));
            }
            long empty = arena.add(new float[0]);
            float[] next = {42f, 43f};
            long after = arena.add(next);
            for (int i = 0; i < added.size(); i++) {
                assertThat(arena.get(handles.get(i))).isEqualTo(added.get(i));
            }
            assertThat(arena.get(empty)).isEmpty();
            assertThat(arena.get(after)).containsExactly(42f, 43f);
            assertThat(arena.heapBytes())
                    .as("values on the heap only without a file")
                    .isEqualTo(arena.mapped() ? 0 : 16 + 4L * (16 << 10) + 16 + 4L * (32 << 10));
            arena.close();
        }
    }

    @Test
    void aVectorLongerThanTheLimitIsRefusedAndOneAtTheLimitKept() {
        VectorArena arena = VectorArena.onHeap();
        float[] longest = new float[VectorArena.MAX_LENGTH];
        longest[longest.length - 1] = 3f;
        assertThat(arena.get(arena.add(longest))).isEqualTo(longest);
        assertThatThrownBy(() -> arena.add(new float[VectorArena.MAX_LENGTH + 1]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most");
    }

    @Test
    void aClosedArenaDeletesItsFileRefusesNewVectorsAndStillReadsTheOldOnes() throws Exception {
        VectorArena arena = VectorArena.mapped(dir, "ns");
        float[] v = vector(new Random(1), 384);
        long h = arena.add(v);
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.toList()).hasSize(1);
        }
        arena.close();
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.toList()).as("the scratch file is gone").isEmpty();
        }
        // a snapshot built before still reads its vectors: the mapping outlives the file's name
        assertThat(arena.get(h)).isEqualTo(v);
        assertThatThrownBy(() -> arena.add(v)).isInstanceOf(IllegalStateException.class);
        arena.close(); // twice is harmless
    }

    @Test
    void twoArenasOfOneNamespaceNeverShareAFile() {
        VectorArena a = VectorArena.mapped(dir, "ns");
        VectorArena b = VectorArena.mapped(dir, "ns");
        float[] v = vector(new Random(2), 8);
        long ha = a.add(v);
        b.add(vector(new Random(3), 8));
        b.close();
        assertThat(a.get(ha)).isEqualTo(v);
        a.close();
    }

    @Test
    void aLongNamespaceNameStillMakesAFile() {
        VectorArena arena = VectorArena.mapped(dir, "n".repeat(250));
        float[] v = {1f, 2f};
        assertThat(arena.get(arena.add(v))).isEqualTo(v);
        arena.close();
    }

    @Test
    void retiredValuesAreCountedAsGarbage() {
        VectorArena arena = VectorArena.onHeap();
        long a = arena.add(new float[30]);
        arena.add(new float[10]);
        assertThat(arena.garbage()).isZero();
        arena.retire(a);
        assertThat(arena.garbage()).isEqualTo(0.75);
        arena.retire(VectorArena.NONE);
        assertThat(arena.garbage()).isEqualTo(0.75);
    }

    /** Readers of published handles read whole vectors while a writer appends and grows the chunks. */
    @Test
    void readersOfPublishedHandlesSeeWholeVectorsWhileAWriterAppends() throws Exception {
        VectorArena arena = VectorArena.mapped(dir, "ns");
        int n = 20_000;
        long[] handles = new long[n];
        AtomicInteger published = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        CountDownLatch readersRunning = new CountDownLatch(2);
        AtomicInteger reads = new AtomicInteger();
        try {
            Future<?> writer = pool.submit(() -> {
                readersRunning.await(); // the reads overlap the appends
                for (int i = 0; i < n; i++) {
                    float[] v = new float[64];
                    Arrays.fill(v, i);
                    handles[i] = arena.add(v);
                    published.set(i + 1); // a volatile write publishes the handle
                }
                return null;
            });
            List<Future<?>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                readers.add(pool.submit(() -> {
                    Random random = new Random();
                    readersRunning.countDown();
                    while (published.get() < n) {
                        int upTo = published.get();
                        if (upTo == 0) {
                            continue;
                        }
                        int i = random.nextInt(upTo);
                        float[] v = arena.get(handles[i]);
                        for (float x : v) {
                            assertThat(x).isEqualTo((float) i);
                        }
                        reads.incrementAndGet();
                    }
                    return null;
                }));
            }
            writer.get();
            for (Future<?> r : readers) {
                r.get();
            }
            assertThat(reads.get()).as("reads made while the writer appended").isPositive();
        } finally {
            pool.shutdownNow();
            arena.close();
        }
    }
}
