package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.AbstractList;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;
import org.apache.lucene.store.FilterIndexInput;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HNSW indexes against an exact scan, across snapshots, restarts and embedding widths. */
class HnswVectorsTest {

    /** Unit vectors around {@code clusters} random centres, like embeddings of a few topics. */
    static float[][] clustered(int n, int dim, int clusters, long seed) {
        Random r = new Random(seed);
        float[][] centres = new float[clusters][dim];
        for (float[] c : centres) {
            for (int i = 0; i < dim; i++) {
                c[i] = (float) r.nextGaussian();
            }
        }
        float[][] out = new float[n][];
        for (int v = 0; v < n; v++) {
            float[] c = centres[r.nextInt(clusters)];
            float[] x = new float[dim];
            for (int i = 0; i < dim; i++) {
                x[i] = c[i] + (float) (0.6 * r.nextGaussian());
            }
            out[v] = unit(x);
        }
        return out;
    }

    static float[] unit(float[] x) {
        double n = 0;
        for (float f : x) {
            n += (double) f * f;
        }
        float[] out = x.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) (out[i] / Math.sqrt(n));
        }
        return out;
    }

    private static List<String> keys(int n, String prefix) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    private static VectorIndexer.Batch batch(String kind, float[][] vectors) {
        return new VectorIndexer.Batch(kind, keys(vectors.length, "k"), vectors);
    }

    /** The passage nearest to the query in a snapshot's passages. */
    private static int top(VectorIndexer.Indexed indexed, float[] query) {
        return top(indexed.byKind().get("passage"), query);
    }

    /** The nearest vector to the query. */
    private static int top(VectorIndex index, float[] query) {
        return index.nearest(query, 1).get(0).passage();
    }

    /** The share of the exact top {@code k} that the index finds, over queries near the data. */
    private static double recall(VectorIndex index, float[][] vectors, float[][] queries, int k) {
        VectorIndex exact = VectorIndex.exact(vectors);
        int found = 0;
        for (float[] q : queries) {
            List<Integer> truth =
                    exact.nearest(q, k).stream().map(Retrieval.Scored::passage).toList();
            found += (int) index.nearest(q, k).stream()
                    .filter(s -> truth.contains(s.passage()))
                    .count();
        }
        return (double) found / (queries.length * k);
    }

    @Test
    void aLargeKindIsSearchedInAGraphThatFindsWhatAScanFinds() throws Exception {
        float[][] vectors = clustered(3000, 48, 20, 1);
        float[][] queries = clustered(60, 48, 20, 2);
        try (HnswVectors store = new HnswVectors(null, 1000, 100)) {
            VectorIndexer.Indexed indexed =
                    store.index(List.of(batch("passage", vectors), batch("fact", clustered(10, 48, 2, 3))));
            VectorIndex passages = indexed.byKind().get("passage");
            assertThat(passages.kind()).isEqualTo("hnsw");
            assertThat(indexed.byKind().get("fact").kind()).isEqualTo("exact"); // below the threshold
            assertThat(recall(passages, vectors, queries, 10)).isGreaterThan(0.95);
            // scores are exact inner products, best first
            List<Retrieval.Scored> top = passages.nearest(queries[0], 5);
            for (Retrieval.Scored s : top) {
                assertThat(s.score())
                        .isCloseTo(Retrieval.dot(queries[0], vectors[s.passage()]), Assertions.within(1e-9));
            }
            assertThat(top).isSortedAccordingTo((a, b) -> Double.compare(b.score(), a.score()));
            assertThat(store.written()).isEqualTo(3000);
            assertThat(store.size()).isEqualTo(3000);
        }
    }

    @Test
    void aNewSnapshotWritesOnlyWhatChangedAndAnOldOneKeepsItsView() throws Exception {
        float[][] before = clustered(1500, 32, 10, 4);
        try (HnswVectors store = new HnswVectors(null, 100, 100)) {
            VectorIndexer.Indexed first = store.index(List.of(batch("passage", before)));
            assertThat(store.written()).isEqualTo(1500);
            // the next snapshot: the same vectors write nothing
            store.index(List.of(batch("passage", before))).release().run();
            assertThat(store.written()).isEqualTo(1500);
            assertThat(store.liveDocs()).isEqualTo(1500);
            // then: vector 7 changes, vector 9 leaves (null), a vector is added at the end
            float[][] after = new float[1501][];
            System.arraycopy(before, 0, after, 0, 1500);
            after[7] = clustered(1, 32, 1, 99)[0];
            after[9] = null;
            after[1500] = clustered(1, 32, 1, 98)[0];
            VectorIndexer.Indexed second = store.index(List.of(batch("passage", after)));
            assertThat(store.written()).isEqualTo(1502);
            assertThat(store.deleted()).isEqualTo(1);
            assertThat(store.liveDocs())
                    .as("Lucene holds one document per live vector")
                    .isEqualTo(1500);
            VectorIndex now = second.byKind().get("passage");
            assertThat(top(now, after[1500])).isEqualTo(1500);
            assertThat(top(now, after[7])).isEqualTo(7);
            // the first snapshot's reader still holds vector 9 as it was: its graph search finds it
            VectorIndex then = first.byKind().get("passage");
            assertThat(top(then, before[9])).isEqualTo(9);
            assertThat(top(then, before[7])).isEqualTo(7);
            // released (and no longer the store's reader), its reader closes and it scans its own vectors
            first.release().run();
            first.release().run(); // a second release changes nothing
            assertThat(((HnswSearch) then).searchable()).isFalse();
            assertThat(((HnswSearch) now).searchable()).isTrue();
            assertThat(top(then, before[9])).isEqualTo(9);
            assertThat(top(now, after[1500])).isEqualTo(1500);
            second.release().run();
        }
    }

    /** A snapshot of the first {@code n} vectors as passages, released at once (its changes written or queued). */
    private static void snapshot(HnswVectors store, float[][] vectors, int n) {
        store.index(List.of(batch("passage", Arrays.copyOf(vectors, n))))
                .release()
                .run();
    }

    /** Runs what is queued only when told: a background that lags as far as a test wants. */
    private static final class Manual implements Executor {
        private final Queue<Runnable> queued = new ArrayDeque<>();

        @Override
        public synchronized void execute(Runnable task) {
            queued.add(task);
        }

        /** Runs the first task queued; false when none was. */
        synchronized boolean runOne() {
            Runnable r = queued.poll();
            if (r != null) {
                r.run();
            }
            return r != null;
        }

        synchronized int runAll() {
            int n = 0;
            for (Runnable r; (r = queued.poll()) != null; n++) {
                r.run();
            }
            return n;
        }
    }

    /** Records what the background wrote and how it failed. */
    private static final class Heard implements HnswVectors.Listener {
        final AtomicLong written = new AtomicLong();
        final AtomicLong deleted = new AtomicLong();
        final List<Exception> failures = new CopyOnWriteArrayList<>();

        @Override
        public void applied(long w, long d) {
            written.addAndGet(w);
            deleted.addAndGet(d);
        }

        @Override
        public void failed(Exception e) {
            failures.add(e);
        }
    }

    /**
     * With a background, a snapshot is served before its new and changed vectors are in the graph: it scans them beside
     * it, leaves the graph's stale copies out, and answers as a snapshot that waited would.
     */
    @Test
    void aSnapshotIsServedBeforeItsVectorsAreWrittenAndScansWhatTheGraphLacks() throws Exception {
        float[][] before = clustered(1500, 32, 10, 21);
        Manual background = new Manual();
        Heard heard = new Heard();
        try (HnswVectors store = new HnswVectors(null, 1000, 100, 16, 64, background, heard)) {
            // more than minVectors waiting (a kind reaching the threshold): the snapshot writes them itself
            store.index(List.of(batch("passage", before))).release().run();
            assertThat(store.written()).isEqualTo(1500);
            assertThat(store.waiting()).isZero();
            assertThat(background.runAll()).isZero();
            // vector 7 changes to sit beside vector 100, vector 9 leaves, 200 are added
            float[][] after = new float[1700][];
            System.arraycopy(before, 0, after, 0, 1500);
            after[7] = before[100].clone();
            after[7][0] += 1e-3f;
            after[9] = null;
            float[][] added = clustered(200, 32, 10, 22);
            System.arraycopy(added, 0, after, 1500, 200);
            VectorIndexer.Indexed served = store.index(List.of(batch("passage", after)));
            assertThat(store.written()).as("nothing written yet").isEqualTo(1500);
            assertThat(store.waiting()).isEqualTo(202);
            VectorIndex index = served.byKind().get("passage");
            assertThat(((HnswSearch) index).tail()).isEqualTo(201);
            assertThat(top(index, added[17])).isEqualTo(1517);
            assertThat(index.nearest(before[9], 3)).noneMatch(s -> s.passage() == 9);
            // the changed vector is found where it is now, once, and scored as it is now
            List<Retrieval.Scored> nearHundred = index.nearest(before[100], 2);
            assertThat(nearHundred).extracting(Retrieval.Scored::passage).containsExactlyInAnyOrder(100, 7);
            assertThat(index.nearest(before[7], 20)).noneMatch(s -> s.passage() == 7);
            float[][] queries = clustered(60, 32, 10, 23);
            assertThat(recall(index, after, queries, 10)).isGreaterThan(0.95);
            // the background writes them; the snapshot served keeps its view, the next one has nothing waiting
            assertThat(background.runAll()).isEqualTo(1);
            assertThat(store.written()).isEqualTo(1701);
            assertThat(store.deleted()).isEqualTo(1);
            assertThat(heard.written.get()).isEqualTo(1701);
            assertThat(heard.deleted.get()).isEqualTo(1);
            // the snapshot still served now searches the graph that holds exactly its vectors, and scans nothing
            assertThat(((HnswSearch) index).tail()).isZero();
            assertThat(store.waiting()).isZero();
            assertThat(top(index, added[17])).isEqualTo(1517);
            assertThat(index.nearest(before[9], 3)).noneMatch(s -> s.passage() == 9);
            assertThat(recall(index, after, queries, 10)).isGreaterThan(0.95);
            VectorIndexer.Indexed next = store.index(List.of(batch("passage", after)));
            assertThat(store.waiting()).isZero();
            assertThat(((HnswSearch) next.byKind().get("passage")).tail()).isZero();
            assertThat(recall(next.byKind().get("passage"), after, queries, 10)).isGreaterThan(0.95);
            assertThat(store.liveDocs()).isEqualTo(1699);
            served.release().run();
            next.release().run();
            assertThat(heard.failures).isEmpty();
        }
    }

    /**
     * Stores sharing one background take turns: changes that reach a store while its write runs (a namespace written
     * without pause) wait behind the other stores' writes queued before them, instead of holding them back.
     */
    @Test
    void storesSharingABackgroundTakeTurnsWhileOneIsWrittenWithoutPause() throws Exception {
        Manual background = new Manual();
        float[][] all = clustered(1400, 16, 6, 31);
        List<String> order = new CopyOnWriteArrayList<>();
        HnswVectors[] busy = new HnswVectors[1];
        int[] busySnapshots = {1200};
        boolean[] armed = {false};
        HnswVectors.Listener busyHeard = new HnswVectors.Listener() {
            @Override
            public void applied(long written, long deleted) {
                order.add("busy " + written);
                if (armed[0] && busySnapshots[0] < 1400) {
                    // the next snapshot of the busy namespace arrives while its write is being reported
                    busySnapshots[0] += 100;
                    snapshot(busy[0], all, busySnapshots[0]);
                }
            }

            @Override
            public void failed(Exception e) {
                order.add("busy failed " + e);
            }
        };
        HnswVectors.Listener quietHeard = new HnswVectors.Listener() {
            @Override
            public void applied(long written, long deleted) {
                order.add("quiet " + written);
            }

            @Override
            public void failed(Exception e) {
                order.add("quiet failed " + e);
            }
        };
        try (HnswVectors b = new HnswVectors(null, 1000, 100, 16, 64, background, busyHeard);
                HnswVectors quiet = new HnswVectors(null, 1000, 100, 16, 64, background, quietHeard)) {
            busy[0] = b;
            snapshot(b, all, 1100); // written by the snapshot itself: more than minVectors waited
            snapshot(quiet, all, 1100);
            order.clear();
            snapshot(b, all, 1200);
            snapshot(quiet, all, 1150);
            armed[0] = true;
            while (background.runOne()) {
                // one task at a time, as a single background thread runs them
            }
            assertThat(order).containsExactly("busy 100", "quiet 50", "busy 100", "busy 100");
            assertThat(b.waiting()).isZero();
            assertThat(b.size()).isEqualTo(1400);
            assertThat(quiet.size()).isEqualTo(1150);
        }
    }

    /** Only the newest snapshot's changes are written when the background lags several snapshots behind. */
    @Test
    void aLaggingBackgroundWritesOnlyTheNewestSnapshot() throws Exception {
        Manual background = new Manual();
        float[][] all = clustered(1600, 16, 6, 24);
        try (HnswVectors store = new HnswVectors(null, 1000, 100, 16, 64, background, new Heard())) {
            snapshot(store, all, 1200);
            VectorIndexer.Indexed older = store.index(List.of(batch("passage", Arrays.copyOf(all, 1300))));
            VectorIndexer.Indexed newest = null;
            for (int n = 1400; n <= 1600; n += 100) {
                if (newest != null) {
                    newest.release().run();
                }
                newest = store.index(List.of(batch("passage", Arrays.copyOf(all, n))));
            }
            assertThat(store.waiting()).isEqualTo(400);
            assertThat(background.runAll()).isEqualTo(1);
            // the newest snapshot searches the graph of its own vectors; an older one keeps scanning what it lacks
            assertThat(((HnswSearch) newest.byKind().get("passage")).tail()).isZero();
            assertThat(((HnswSearch) older.byKind().get("passage")).tail()).isEqualTo(100);
            assertThat(top(older, all[1250])).isEqualTo(1250);
            assertThat(older.byKind().get("passage").nearest(all[1450], 3)).noneMatch(s -> s.passage() >= 1300);
            older.release().run();
            newest.release().run();
            assertThat(store.written()).isEqualTo(1600);
            assertThat(store.size()).isEqualTo(1600);
        }
    }

    /**
     * Snapshots taken while a real background thread writes: every one answers as a scan of its own vectors would
     * (up to the graph's approximation), never with a vector it does not have; then the store closes mid-write and
     * reopens from what was committed.
     */
    @Test
    void snapshotsTakenWhileTheBackgroundWritesAnswerFromTheirOwnVectors(@TempDir Path dir) throws Exception {
        ExecutorService background = Executors.newSingleThreadExecutor();
        Heard heard = new Heard();
        float[][] pool = clustered(4000, 24, 12, 25);
        float[][] queries = clustered(30, 24, 12, 26);
        Random random = new Random(27);
        float[][] last = null;
        long scanned = 0;
        try (HnswVectors store = new HnswVectors(dir, 500, 100, 16, 64, background, heard)) {
            int n = 600;
            for (int round = 0; round < 25; round++, n += 120) {
                float[][] now = Arrays.copyOf(pool, n);
                for (int i = 0; i < 10; i++) { // some leave, some change
                    int at = random.nextInt(n);
                    now[at] = random.nextBoolean() ? null : pool[random.nextInt(pool.length)];
                }
                VectorIndexer.Indexed served = store.index(List.of(batch("passage", now)));
                scanned += store.waiting();
                VectorIndex index = served.byKind().get("passage");
                for (float[] q : queries) {
                    List<Retrieval.Scored> top = index.nearest(q, 10);
                    assertThat(top).allMatch(s -> now[s.passage()] != null);
                    assertThat(top.stream().map(Retrieval.Scored::passage).distinct())
                            .hasSize(top.size());
                    for (Retrieval.Scored s : top) {
                        assertThat(s.score()).isEqualTo(Retrieval.dot(q, now[s.passage()]));
                    }
                }
                assertThat(recall(index, now, queries, 10)).isGreaterThan(0.9);
                served.release().run();
                last = now;
            }
        } finally {
            background.shutdown();
            assertThat(background.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(heard.failures).isEmpty();
        assertThat(scanned)
                .as("snapshots were served before their vectors were written")
                .isPositive();
        try (HnswVectors reopened = new HnswVectors(dir, 500, 100)) {
            VectorIndexer.Indexed again = reopened.index(List.of(batch("passage", last)));
            long live = Arrays.stream(last).filter(Objects::nonNull).count();
            assertThat(reopened.size()).isEqualTo(live);
            assertThat(reopened.liveDocs()).isEqualTo(live);
            assertThat(recall(again.byKind().get("passage"), last, queries, 10)).isGreaterThan(0.9);
            again.release().run();
        }
    }

    /** The exact top {@code k} of a query, as positions. */
    private static List<Integer> exactTop(float[][] vectors, float[] query, int k) {
        return VectorIndex.exact(vectors).nearest(query, k).stream()
                .map(Retrieval.Scored::passage)
                .toList();
    }

    /**
     * Vectors that moved away or left while the background has not written it yet still sit in the graph where they
     * were: a search near them must not let them crowd out what is now nearest, whether a few (more candidates) or
     * many (a filter) are stale.
     */
    @Test
    void staleVectorsInTheGraphNeverCrowdOutTheNearest() throws Exception {
        for (int moved : new int[] {6, 100}) { // below and above efSearch
            float[][] before = clustered(1200, 16, 8, 40);
            float[] centre = before[0];
            // the 150 nearest to vector 0, which a search near it would find first
            List<Integer> near = exactTop(before, centre, 150);
            Manual background = new Manual();
            try (HnswVectors store = new HnswVectors(null, 1000, 10, 16, 64, background, new Heard())) {
                store.index(List.of(batch("passage", before))).release().run();
                float[][] after = before.clone();
                float[] far = unit(centre.clone());
                for (int i = 0; i < far.length; i++) {
                    far[i] = -far[i];
                }
                for (int i = 1; i <= moved; i++) {
                    int at = near.get(i);
                    if (i % 2 == 0) {
                        after[at] = null; // gone
                    } else {
                        after[at] = far.clone(); // moved to the other side
                        after[at][i % far.length] += 1e-3f * i;
                    }
                }
                VectorIndexer.Indexed served = store.index(List.of(batch("passage", after)));
                assertThat(store.waiting()).isEqualTo(moved);
                VectorIndex index = served.byKind().get("passage");
                // a graph search of 10 candidates is approximate; left to crowd, the stale ones would take 9 of 10
                List<Integer> found = index.nearest(centre, 10).stream()
                        .map(Retrieval.Scored::passage)
                        .toList();
                assertThat(found).as("%d stale", moved).allMatch(p -> after[p] == before[p]);
                assertThat(found.stream().filter(exactTop(after, centre, 10)::contains))
                        .as("%d stale", moved)
                        .hasSizeGreaterThanOrEqualTo(8);
                // and the heads of searches for fewer agree with a search for more
                assertThat(index.nearest(centre, 4))
                        .containsExactlyElementsOf(index.nearest(centre, 10).subList(0, 4));
                served.release().run();
            }
        }
    }

    /**
     * A background write that fails (a key Lucene refuses) is reported; the snapshot served meanwhile keeps answering,
     * and the next snapshot without the bad vector is right again.
     */
    @Test
    void aFailedBackgroundWriteIsReportedAndTheNextSnapshotIsRight() throws Exception {
        float[][] vectors = clustered(1300, 16, 6, 41);
        Manual background = new Manual();
        Heard heard = new Heard();
        try (HnswVectors store = new HnswVectors(null, 1000, 100, 16, 64, background, heard)) {
            snapshot(store, vectors, 1200);
            List<String> keys = new ArrayList<>(keys(1300, "k"));
            keys.set(1250, "x".repeat(40_000)); // longer than a Lucene term may be
            VectorIndexer.Indexed served = store.index(List.of(new VectorIndexer.Batch("passage", keys, vectors)));
            background.runAll();
            assertThat(heard.failures).hasSize(1);
            store.awaitWritten();
            VectorIndex index = served.byKind().get("passage");
            assertThat(top(index, vectors[1250])).isEqualTo(1250);
            assertThat(top(index, vectors[3])).isEqualTo(3);
            served.release().run();
            VectorIndexer.Indexed next = store.index(List.of(batch("passage", vectors)));
            background.runAll();
            assertThat(store.size()).isEqualTo(1300);
            assertThat(store.liveDocs()).isEqualTo(1300);
            assertThat(recall(next.byKind().get("passage"), vectors, clustered(40, 16, 6, 42), 10))
                    .isGreaterThan(0.95);
            next.release().run();
        }
    }

    /** A background that takes no more tasks (shutting down): snapshots scan what waits, then write it themselves. */
    @Test
    void aBackgroundThatRefusesTasksLeavesEachSnapshotRight() throws Exception {
        Executor refusing = task -> {
            throw new RejectedExecutionException("shut down");
        };
        float[][] vectors = clustered(1900, 16, 6, 43);
        try (HnswVectors store = new HnswVectors(null, 500, 100, 16, 64, refusing, new Heard())) {
            snapshot(store, vectors, 600);
            VectorIndexer.Indexed scanned = store.index(List.of(batch("passage", Arrays.copyOf(vectors, 1000))));
            store.awaitWritten(); // returns: nothing is queued
            assertThat(store.waiting()).isEqualTo(400);
            assertThat(top(scanned, vectors[999])).isEqualTo(999);
            scanned.release().run();
            // more than minVectors waiting: written by the snapshot itself
            store.index(List.of(batch("passage", vectors))).release().run();
            assertThat(store.waiting()).isZero();
            assertThat(store.size()).isEqualTo(1900);
        }
    }

    /** Changes of an older snapshot are never written over those of a newer one that wrote its own. */
    @Test
    void anOlderSnapshotsChangesAreNotWrittenOverANewerOnes() throws Exception {
        Manual background = new Manual();
        float[][] vectors = clustered(2600, 16, 6, 44);
        try (HnswVectors store = new HnswVectors(null, 1000, 100, 16, 64, background, new Heard())) {
            snapshot(store, vectors, 1100);
            snapshot(store, vectors, 1200); // queued
            store.index(List.of(batch("passage", vectors))).release().run(); // 1,500 waiting: written at once
            assertThat(store.written()).isEqualTo(2600);
            background.runAll();
            assertThat(store.written())
                    .as("the older snapshot's changes were dropped")
                    .isEqualTo(2600);
            assertThat(store.size()).isEqualTo(2600);
            VectorIndexer.Indexed again = store.index(List.of(batch("passage", vectors)));
            assertThat(store.waiting()).isZero();
            again.release().run();
        }
    }

    /**
     * Keys that hold the reader of key {@code holdAt} (counting every read) until released: the first {@code size()}
     * reads are the snapshot's comparison with the index, the next ones its own write of what changed.
     */
    private static final class HeldKeys extends AbstractList<String> {
        private final List<String> keys;
        private final int holdAt;
        private final CountDownLatch held = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private final AtomicInteger reads = new AtomicInteger();

        HeldKeys(List<String> keys, int holdAt) {
            this.keys = keys;
            this.holdAt = holdAt;
        }

        @Override
        public String get(int i) {
            if (reads.incrementAndGet() == holdAt) {
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return keys.get(i);
        }

        @Override
        public int size() {
            return keys.size();
        }
    }

    /**
     * The background takes an older snapshot's changes while a newer snapshot writes its own: once the newer one is
     * published, the older one is dropped, not written over it.
     */
    @Test
    void anOlderSnapshotTakenByTheBackgroundIsNotWrittenOverANewerOne() throws Exception {
        Manual background = new Manual();
        float[][] vectors = clustered(2600, 16, 6, 45);
        try (HnswVectors store = new HnswVectors(null, 1000, 100, 16, 64, background, new Heard())) {
            snapshot(store, vectors, 1100);
            snapshot(store, vectors, 1200); // queued
            // 1,500 new: written by the snapshot itself, held at its first write
            HeldKeys keys = new HeldKeys(keys(2600, "k"), 2601);
            ExecutorService threads = Executors.newFixedThreadPool(2);
            try {
                Future<VectorIndexer.Indexed> newer =
                        threads.submit(() -> store.index(List.of(new VectorIndexer.Batch("passage", keys, vectors))));
                assertThat(keys.held.await(30, TimeUnit.SECONDS)).isTrue();
                Future<Integer> older = threads.submit(background::runAll); // takes the queued snapshot, waits
                Thread.sleep(200);
                keys.release.countDown();
                newer.get(30, TimeUnit.SECONDS).release().run();
                assertThat(older.get(30, TimeUnit.SECONDS)).isEqualTo(1);
            } finally {
                threads.shutdownNow();
            }
            assertThat(store.deleted())
                    .as("nothing of the newer snapshot was taken back")
                    .isZero();
            assertThat(store.size()).isEqualTo(2600);
            assertThat(store.liveDocs()).isEqualTo(2600);
            store.index(List.of(batch("passage", vectors))).release().run();
            assertThat(store.waiting()).isZero();
        }
    }

    /** A listener that throws does not stop the background: the next snapshot's changes are written too. */
    @Test
    void aListenerThatThrowsDoesNotStopTheBackground() throws Exception {
        Manual background = new Manual();
        HnswVectors.Listener throwing = new HnswVectors.Listener() {
            @Override
            public void applied(long written, long deleted) {
                throw new IllegalStateException("listener");
            }

            @Override
            public void failed(Exception e) {
                throw new IllegalStateException("listener");
            }
        };
        float[][] vectors = clustered(1400, 16, 6, 46);
        try (HnswVectors store = new HnswVectors(null, 1000, 100, 16, 64, background, throwing)) {
            snapshot(store, vectors, 1100);
            snapshot(store, vectors, 1200);
            assertThat(background.runAll()).isEqualTo(1);
            assertThat(store.written()).isEqualTo(1200);
            snapshot(store, vectors, 1300);
            assertThat(background.runAll()).isEqualTo(1);
            store.awaitWritten();
            assertThat(store.written()).isEqualTo(1300);
            snapshot(store, vectors, 1300);
            assertThat(store.waiting()).isZero();
        }
    }

    @Test
    void aNonFiniteVectorIsLeftOutAndAnyNumberOfResultsCanBeAsked() throws Exception {
        float[][] vectors = clustered(300, 16, 3, 12);
        vectors[4] = vectors[4].clone();
        vectors[4][0] = Float.NaN;
        try (HnswVectors store = new HnswVectors(null, 100, 100)) {
            VectorIndexer.Indexed indexed = store.index(List.of(batch("passage", vectors)));
            VectorIndex index = indexed.byKind().get("passage");
            assertThat(index.kind()).isEqualTo("hnsw");
            assertThat(store.liveDocs()).isEqualTo(299);
            assertThat(index.nearest(vectors[5], Integer.MAX_VALUE))
                    .hasSize(299)
                    .noneMatch(s -> s.passage() == 4);
            assertThat(VectorIndex.exact(vectors).nearest(vectors[5], Integer.MAX_VALUE))
                    .hasSize(299)
                    .noneMatch(s -> s.passage() == 4);
            indexed.release().run();
        }
    }

    @Test
    void aStoreThatCannotOpenItsIndexTriesAgainAtTheNextSnapshot(@TempDir Path dir) throws Exception {
        Path path = dir.resolve("index");
        Files.writeString(path, "not a directory");
        float[][] vectors = clustered(200, 16, 3, 13);
        try (HnswVectors store = new HnswVectors(path, 100, 100)) {
            assertThatThrownBy(() -> store.index(List.of(batch("passage", vectors))))
                    .isInstanceOf(UncheckedIOException.class);
            Files.delete(path);
            VectorIndexer.Indexed indexed = store.index(List.of(batch("passage", vectors)));
            assertThat(indexed.byKind().get("passage").kind()).isEqualTo("hnsw");
            assertThat(store.liveDocs()).isEqualTo(200);
            indexed.release().run();
        }
    }

    /**
     * An index whose files can no longer be read when a snapshot searches it (a disk that fails, files gone): the
     * snapshot answers exactly, by a scan, without an error; the store hears of it once; the next snapshot starts the
     * index again, writing every vector, and searches its graph.
     */
    @Test
    void aSearchThatCannotReadTheIndexAnswersByAScanAndTheNextSnapshotStartsAgain(@TempDir Path dir) throws Exception {
        float[][] vectors = clustered(300, 16, 4, 61);
        List<IndexInput> inputs = new CopyOnWriteArrayList<>();
        HnswVectors.Directories directories = p -> new FilterDirectory(FSDirectory.open(p)) {
            @Override
            public IndexInput openInput(String name, IOContext context) throws IOException {
                IndexInput input = super.openInput(name, context);
                inputs.add(input);
                return input;
            }
        };
        Heard heard = new Heard();
        try (HnswVectors store = new HnswVectors(dir.resolve("index"), 100, 100, 16, 64, null, heard, directories, 0)) {
            VectorIndexer.Indexed first = store.index(List.of(batch("passage", vectors)));
            VectorIndex index = first.byKind().get("passage");
            assertThat(index.kind()).isEqualTo("hnsw");
            assertThat(top(index, vectors[7])).isEqualTo(7);
            // a second snapshot on the same files, which searches only after the index was started again
            VectorIndexer.Indexed older = store.index(List.of(batch("passage", vectors)));
            for (IndexInput input : inputs) {
                input.close(); // every file the index reads is gone from under it
            }
            VectorIndex exact = VectorIndex.exact(vectors);
            for (int i : new int[] {0, 7, 150, 299}) {
                assertThat(index.nearest(vectors[i], 5)).isEqualTo(exact.nearest(vectors[i], 5));
            }
            assertThat(heard.failures).hasSize(1);
            assertThat(heard.failures.get(0)).hasMessageContaining("answered by a scan");
            first.release().run();

            VectorIndexer.Indexed next = store.index(List.of(batch("passage", vectors)));
            VectorIndex again = next.byKind().get("passage");
            assertThat(again.kind()).isEqualTo("hnsw");
            assertThat(store.written()).as("every vector written again").isEqualTo(600);
            assertThat(store.liveDocs()).isEqualTo(300);
            for (int i : new int[] {0, 7, 150, 299}) {
                assertThat(top(again, vectors[i])).isEqualTo(i);
            }
            assertThat(heard.failures).hasSize(1);

            VectorIndex late = older.byKind().get("passage");
            assertThat(late.nearest(vectors[150], 5)).isEqualTo(exact.nearest(vectors[150], 5));
            assertThat(heard.failures)
                    .as("a snapshot of the index before it started again tells nothing of the index now")
                    .hasSize(1);
            older.release().run();
            VectorIndexer.Indexed last = store.index(List.of(batch("passage", vectors)));
            assertThat(store.written()).as("nothing written again").isEqualTo(600);
            assertThat(top(last.byKind().get("passage"), vectors[150])).isEqualTo(150);
            last.release().run();
            next.release().run();
        }
    }

    /** A directory on disk that counts the files it opened and has not closed, and whose syncs fail when told to. */
    private static final class FaultyDirectory extends FilterDirectory {
        private final AtomicInteger open;
        private final AtomicBoolean failSync;

        FaultyDirectory(Directory in, AtomicInteger open, AtomicBoolean failSync) {
            super(in);
            this.open = open;
            this.failSync = failSync;
        }

        @Override
        public IndexInput openInput(String name, IOContext context) throws IOException {
            IndexInput input = super.openInput(name, context);
            open.incrementAndGet();
            return new FilterIndexInput("counted " + name, input) {
                private boolean closed;

                @Override
                public void close() throws IOException {
                    if (!closed) {
                        closed = true;
                        open.decrementAndGet();
                    }
                    super.close();
                }
            };
        }

        @Override
        public void sync(Collection<String> names) throws IOException {
            if (failSync.get()) {
                throw new IOException("sync refused (a disk that fails)");
            }
            super.sync(names);
        }
    }

    /**
     * A commit that fails after the written changes were opened for reading: the new reader is closed (no file left
     * open once the store closes), the snapshot fails, and the next one writes its changes again from the last commit.
     */
    @Test
    void aFailedCommitClosesTheNewReaderAndTheNextSnapshotWritesFromTheLastCommit(@TempDir Path dir) throws Exception {
        float[][] vectors = clustered(300, 16, 4, 51);
        float[][] changed = vectors.clone();
        for (int i = 0; i < 20; i++) {
            changed[i] = clustered(1, 16, 1, 100 + i)[0];
        }
        AtomicInteger open = new AtomicInteger();
        AtomicBoolean failSync = new AtomicBoolean();
        HnswVectors.Directories directories = p -> new FaultyDirectory(FSDirectory.open(p), open, failSync);
        // every write is committed at once
        try (HnswVectors store =
                new HnswVectors(dir.resolve("index"), 100, 100, 16, 64, null, new Heard(), directories, 0)) {
            snapshot(store, vectors, 300);
            assertThat(store.written()).isEqualTo(300);
            failSync.set(true);
            assertThatThrownBy(() -> store.index(List.of(batch("passage", changed))))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasRootCauseMessage("sync refused (a disk that fails)");
            assertThat(store.written()).as("a failed write is not counted").isEqualTo(300);
            failSync.set(false);
            VectorIndexer.Indexed next = store.index(List.of(batch("passage", changed)));
            assertThat(store.written())
                    .as("the changes again, on the last commit")
                    .isEqualTo(320);
            assertThat(store.liveDocs()).isEqualTo(300);
            VectorIndex index = next.byKind().get("passage");
            assertThat(index.kind()).isEqualTo("hnsw");
            for (int i : new int[] {0, 7, 19, 20, 299}) {
                assertThat(top(index, changed[i])).isEqualTo(i);
            }
            next.release().run();
        }
        assertThat(open.get()).as("files left open by readers never released").isZero();
    }

    /**
     * A namespace growing through many snapshots, each replacing the one before as a loader does, with the vectors they
     * lack written by a real background thread: every reader is let go of (no file stays open once the last snapshot is
     * released and the store closed), and the index on disk is about what snapshots writing their own vectors leave.
     */
    @Test
    void snapshotsWrittenInTheBackgroundLeaveNoReaderOpen(@TempDir Path dir) throws Exception {
        float[][] all = clustered(12_200, 16, 20, 61);
        long[] sizes = new long[2];
        for (int mode = 0; mode < 2; mode++) {
            AtomicInteger open = new AtomicInteger();
            AtomicInteger tasks = new AtomicInteger();
            ExecutorService thread = Executors.newSingleThreadExecutor();
            Executor background = task -> thread.execute(() -> {
                tasks.incrementAndGet();
                task.run();
            });
            Path path = dir.resolve("index-" + mode);
            HnswVectors.Directories directories =
                    p -> new FaultyDirectory(FSDirectory.open(p), open, new AtomicBoolean());
            try (HnswVectors store = new HnswVectors(
                    path, 1000, 100, 16, 64, mode == 1 ? background : null, new Heard(), directories, 0)) {
                VectorIndexer.Indexed previous = null;
                // 400 new vectors a snapshot: fewer than the 1,000 a snapshot scans at most while they wait
                for (int n = 1000; n <= all.length; n += 400) {
                    VectorIndexer.Indexed now = store.index(List.of(batch("passage", Arrays.copyOf(all, n))));
                    assertThat(top(now, all[n - 1])).isEqualTo(n - 1);
                    if (previous != null) {
                        previous.release().run();
                    }
                    previous = now;
                }
                store.awaitWritten();
                assertThat(store.size()).isEqualTo(all.length);
                previous.release().run();
            } finally {
                thread.shutdown();
                assertThat(thread.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            }
            if (mode == 1) {
                assertThat(tasks.get()).as("writes made by the background").isPositive();
            }
            assertThat(open.get()).as("files left open, mode %d", mode).isZero();
            try (Stream<Path> files = Files.walk(path)) {
                sizes[mode] = files.filter(Files::isRegularFile)
                        .mapToLong(f -> f.toFile().length())
                        .sum();
            }
        }
        assertThat((double) sizes[1]).isCloseTo(sizes[0], Assertions.withinPercentage(25));
    }

    @Test
    void anIndexOnDiskOutlivesARestartAndTheFirstSnapshotWritesOnlyTheDifference(@TempDir Path dir) throws Exception {
        float[][] vectors = clustered(1200, 32, 8, 5);
        try (HnswVectors store = new HnswVectors(dir, 100, 100)) {
            store.index(List.of(batch("passage", vectors))).release().run();
        }
        vectors[3] = clustered(1, 32, 1, 77)[0];
        try (HnswVectors reopened = new HnswVectors(dir, 100, 100)) {
            VectorIndexer.Indexed indexed = reopened.index(List.of(batch("passage", vectors)));
            assertThat(reopened.written()).isEqualTo(1);
            assertThat(reopened.size()).isEqualTo(1200);
            assertThat(top(indexed, vectors[3])).isEqualTo(3);
            indexed.release().run();
        }
    }

    /**
     * Two kinds with the same keys (a passage and its question, say) are two vectors each: both indexed, one kind
     * dropped while the other stays, and both read back from disk by kind and key.
     */
    /**
     * An index damaged on disk (its commit overwritten, as a disk that lost a write leaves it) is started again empty
     * and written from the snapshot, which answers right; the listener hears why. Before, the namespace was searched
     * exactly for good, each snapshot failing to open it.
     */
    @Test
    void aDamagedIndexOnDiskIsStartedAgainFromTheSnapshot(@TempDir Path dir) throws Exception {
        float[][] vectors = clustered(1200, 32, 8, 71);
        try (HnswVectors store = new HnswVectors(dir, 100, 100)) {
            snapshot(store, vectors, 1200);
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path commit : files.filter(f -> f.getFileName().toString().startsWith("segments_"))
                    .toList()) {
                Files.write(commit, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
            }
        }
        Heard heard = new Heard();
        try (HnswVectors reopened = new HnswVectors(dir, 100, 100, 16, 64, null, heard)) {
            VectorIndexer.Indexed indexed = reopened.index(List.of(batch("passage", vectors)));
            assertThat(indexed.byKind().get("passage").kind()).isEqualTo("hnsw");
            assertThat(reopened.written()).isEqualTo(1200);
            assertThat(reopened.liveDocs()).isEqualTo(1200);
            assertThat(top(indexed, vectors[5])).isEqualTo(5);
            assertThat(heard.failures).hasSize(1);
            assertThat(heard.failures.get(0)).hasMessageContaining("started again empty");
            indexed.release().run();
        }
        // and it is an index like any other: reopened, it writes only what changed
        vectors[3] = clustered(1, 32, 1, 72)[0];
        try (HnswVectors again = new HnswVectors(dir, 100, 100)) {
            again.index(List.of(batch("passage", vectors))).release().run();
            assertThat(again.written()).isEqualTo(1);
        }
    }

    @Test
    void kindsWithTheSameKeysAreKeptApartAcrossSnapshotsAndRestarts(@TempDir Path dir) throws Exception {
        float[][] passages = clustered(300, 16, 4, 31);
        float[][] questions = clustered(300, 16, 4, 37);
        try (HnswVectors store = new HnswVectors(dir, 100, 100)) {
            VectorIndexer.Indexed both = store.index(List.of(batch("passage", passages), batch("question", questions)));
            assertThat(store.size()).isEqualTo(600);
            assertThat(store.liveDocs()).isEqualTo(600);
            for (int i = 0; i < 300; i += 37) { // each kind finds its own vector at its own position
                assertThat(top(both, passages[i])).isEqualTo(i);
                assertThat(both.byKind()
                                .get("question")
                                .nearest(questions[i], 1)
                                .get(0)
                                .passage())
                        .isEqualTo(i);
            }
            both.release().run();
            // the questions leave the snapshot: theirs are deleted, the passages' stay as they are
            store.index(List.of(batch("passage", passages))).release().run();
            assertThat(store.size()).isEqualTo(300);
            assertThat(store.liveDocs()).isEqualTo(300);
            assertThat(store.deleted()).isEqualTo(300);
            assertThat(store.written()).isEqualTo(600);
            store.index(List.of(batch("passage", passages), batch("question", questions)))
                    .release()
                    .run();
        }
        try (HnswVectors reopened = new HnswVectors(dir, 100, 100)) {
            VectorIndexer.Indexed again =
                    reopened.index(List.of(batch("passage", passages), batch("question", questions)));
            assertThat(reopened.written()).isZero();
            assertThat(reopened.size()).isEqualTo(600);
            assertThat(again.byKind()
                            .get("question")
                            .nearest(questions[5], 1)
                            .get(0)
                            .passage())
                    .isEqualTo(5);
            again.release().run();
        }
    }

    /**
     * A quantized graph finds what a scan finds, its candidates scored exactly; an index holding segments written in
     * several quantizations is read back as written, each segment by its own format's name, whatever the store is
     * opened with.
     */
    @Test
    void quantizedGraphsFindWhatAScanFindsAndAreReadBackAsWritten(@TempDir Path dir) throws Exception {
        float[][] vectors = clustered(1500, 32, 8, 11);
        float[][] queries = Arrays.copyOfRange(clustered(1550, 32, 8, 11), 1500, 1550); // near, not in, the index
        for (EngramHnswFormat.Quantization q : List.of(
                EngramHnswFormat.Quantization.INT8,
                EngramHnswFormat.Quantization.INT4,
                EngramHnswFormat.Quantization.BIT1)) {
            Path path = dir.resolve(q.wireName());
            EngramHnswFormat format = EngramHnswFormat.of(16, 64, q);
            assertThat(format.quantization()).isEqualTo(q);
            try (HnswVectors store = new HnswVectors(path, 100, 100, format, null, new Heard())) {
                store.index(List.of(batch("passage", Arrays.copyOf(vectors, 1000))))
                        .release()
                        .run();
            }
            try (HnswVectors full = new HnswVectors(path, 100, 100)) { // the next 500 in full floats
                VectorIndexer.Indexed indexed = full.index(List.of(batch("passage", vectors)));
                assertThat(full.written()).isEqualTo(500);
                indexed.release().run();
            }
            try (HnswVectors reopened = new HnswVectors(path, 100, 100, format, null, new Heard())) {
                VectorIndexer.Indexed indexed = reopened.index(List.of(batch("passage", vectors)));
                assertThat(reopened.written()).isZero();
                VectorIndex graph = indexed.byKind().get("passage");
                assertThat(graph.kind()).isEqualTo("hnsw");
                assertThat(recall(graph, vectors, queries, 10)).as(q.wireName()).isGreaterThanOrEqualTo(0.9);
                for (int i = 0; i < 1500; i += 50) { // each vector its own nearest, scored exactly
                    Retrieval.Scored best = graph.nearest(vectors[i], 1).get(0);
                    assertThat(best.passage()).as(q.wireName()).isEqualTo(i);
                    assertThat(best.score()).isCloseTo(1.0, Assertions.within(1e-4));
                }
                indexed.release().run();
            }
        }
        assertThat(EngramHnswFormat.Quantization.of(" Int8 ")).isEqualTo(EngramHnswFormat.Quantization.INT8);
        assertThatThrownBy(() -> EngramHnswFormat.Quantization.of("int2"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("none, int8, int4 or bit1");
    }

    /**
     * The graph's parameters shape only how new graphs are built: a store opened with others reads the index as it is.
     */
    @Test
    void anIndexBuiltWithOtherGraphParametersIsReadAsItIs(@TempDir Path dir) throws Exception {
        float[][] vectors = clustered(1500, 32, 8, 9);
        try (HnswVectors store = new HnswVectors(dir, 100, 100, 12, 40)) {
            store.index(List.of(batch("passage", vectors))).release().run();
        }
        try (HnswVectors reopened = new HnswVectors(dir, 100, 100)) {
            VectorIndexer.Indexed indexed = reopened.index(List.of(batch("passage", vectors)));
            assertThat(reopened.written()).isZero();
            VectorIndex graph = indexed.byKind().get("passage");
            assertThat(graph.kind()).isEqualTo("hnsw");
            for (int q = 0; q < 50; q++) { // each vector is found as its own nearest
                assertThat(top(graph, vectors[q * 30])).isEqualTo(q * 30);
            }
            indexed.release().run();
        }
        assertThatThrownBy(() -> new HnswVectors(dir, 100, 100, 0, 64)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aKindStaysIndexedUntilItShrinksBelowHalfTheThreshold() throws Exception {
        try (HnswVectors store = new HnswVectors(null, 500, 100)) {
            store.index(List.of(batch("fact", clustered(600, 16, 4, 6))))
                    .release()
                    .run();
            assertThat(store.size()).isEqualTo(600);
            VectorIndexer.Indexed fewer = store.index(List.of(batch("fact", clustered(400, 16, 4, 6))));
            assertThat(fewer.byKind().get("fact").kind()).isEqualTo("hnsw"); // no flapping around 500
            fewer.release().run();
            VectorIndexer.Indexed small = store.index(List.of(batch("fact", clustered(200, 16, 4, 6))));
            assertThat(small.byKind().get("fact").kind()).isEqualTo("exact");
            assertThat(store.size()).isZero();
            assertThat(store.liveDocs()).isZero();
            // back above half the threshold is not enough to index it again: it needs the whole threshold
            assertThat(store.index(List.of(batch("fact", clustered(400, 16, 4, 6))))
                            .byKind()
                            .get("fact")
                            .kind())
                    .isEqualTo("exact");
        }
    }

    @Test
    void embeddingsWiderThanLucenesDefaultLimitAreIndexed() throws Exception {
        float[][] wide = clustered(300, 1536, 5, 7);
        for (EngramHnswFormat.Quantization q : EngramHnswFormat.Quantization.values()) {
            try (HnswVectors store =
                    new HnswVectors(null, 100, 100, EngramHnswFormat.of(16, 64, q), null, new Heard())) {
                VectorIndex index =
                        store.index(List.of(batch("passage", wide))).byKind().get("passage");
                assertThat(index.kind()).as(q.wireName()).isEqualTo("hnsw");
                assertThat(top(index, wide[42])).as(q.wireName()).isEqualTo(42);
                // a query of another width is refused with the scan's message, not a Lucene error
                assertThatThrownBy(() -> index.nearest(new float[384], 3)).hasMessageContaining("re-embed");
            }
        }
    }

    @Test
    void vectorsOfMixedWidthsAreScanned() throws Exception {
        float[][] mixed = clustered(300, 16, 3, 8);
        mixed[5] = clustered(1, 24, 1, 9)[0];
        try (HnswVectors store = new HnswVectors(null, 100, 100)) {
            assertThat(store.index(List.of(batch("passage", mixed)))
                            .byKind()
                            .get("passage")
                            .kind())
                    .isEqualTo("exact");
            assertThat(store.size()).isZero();
        }
    }
}
