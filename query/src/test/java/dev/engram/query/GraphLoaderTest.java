package dev.engram.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.metrics.Meters;
import dev.engram.retrieval.HnswVectors;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.MemoryGraphBuilder;
import dev.engram.retrieval.Passage;
import dev.engram.retrieval.Retrieval;
import dev.engram.retrieval.VectorIndexer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When a namespace's snapshot is rebuilt: by the query, or in the background while the previous one is served. */
class GraphLoaderTest {

    private static final VectorSearch SEARCH = new VectorSearch(50_000, 100);

    private final Meters meters = Meters.detached();
    private final List<Long> released = new CopyOnWriteArrayList<>();

    private long built(String how, String outcome) {
        return meters.registry()
                .get(Meters.SNAPSHOT_BUILDS)
                .tag("how", how)
                .tag("outcome", outcome)
                .timer()
                .count();
    }

    private final AtomicInteger builds = new AtomicInteger();

    private Supplier<MemoryGraph> snapshot(long version) {
        return () -> {
            builds.incrementAndGet();
            return MemoryGraph.builder(version)
                    .indexer(batches -> new VectorIndexer.Indexed(
                            VectorIndexer.EXACT.index(batches).byKind(), () -> released.add(version)))
                    .build();
        };
    }

    /** A snapshot built once {@code proceed} is counted down: a build that runs until the test lets it finish. */
    private Supplier<MemoryGraph> snapshotOnceReleased(CountDownLatch proceed, long version) {
        return () -> {
            try {
                assertThat(proceed.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return snapshot(version).get();
        };
    }

    /** The time as the loaders of the timing tests read it: it moves only when a test moves it. */
    private static final class TestTicker implements GraphLoader.Ticker {
        private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
        private final Instant start = Instant.parse("2026-01-01T00:00:00Z");

        @Override
        public long nanoTime() {
            return nanos.get();
        }

        @Override
        public Instant now() {
            return start.plusNanos(nanos.get());
        }

        void advance(long millis) {
            nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
        }
    }

    private final TestTicker ticker = new TestTicker();

    /** A snapshot that takes 200 ms (of the test's time) to build. */
    private Supplier<MemoryGraph> slowSnapshot(long version) {
        return () -> {
            ticker.advance(200);
            return snapshot(version).get();
        };
    }

    /** A loader of the timing tests: no staleness bound, every build inline, a quarter of a core for rebuilds. */
    private GraphLoader quarterOfACore() {
        return new GraphLoader(GraphLoader.Settings.of(0, 60_000).withBuildShare(0.25), SEARCH, meters, ticker);
    }

    private static MemoryGraph awaitVersion(GraphLoader loader, long version) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            MemoryGraph g = loader.graph("ns", version, () -> {
                throw new AssertionError("the query must not build while a background build is due");
            });
            if (g.version() == version) {
                return g;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no snapshot of version " + version);
    }

    @Test
    void aCheapSnapshotIsRebuiltByTheQueryThatFindsItStale() {
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(0, 60_000), SEARCH, meters)) {
            assertThat(loader.graph("ns", 1, snapshot(1)).version()).isEqualTo(1);
            assertThat(loader.graph("ns", 1, snapshot(1)).version()).isEqualTo(1);
            assertThat(builds).hasValue(1); // same version: served from the cache
            assertThat(loader.graph("ns", 2, snapshot(2)).version()).isEqualTo(2);
            assertThat(builds).hasValue(2);
            assertThat(released).containsExactly(1L); // the replaced snapshot lets go of its indexes
            assertThat(built("inline", "ok")).isEqualTo(2);
            assertThat(built("background", "ok")).isZero();
        }
    }

    /**
     * Memory's stores restored while a snapshot was being built (an exactly-once rollback, a partition that came back):
     * what that build read may never have been committed, so its snapshot is served to its caller but built again at
     * the next query, though memory's version has not moved. A build does not tell whose stores were restored while it
     * ran (restores are rare, and builds that overlap one few): any restore meanwhile makes it build again.
     */
    @Test
    void aSnapshotBuiltWhileMemoryWasRestoredIsBuiltAgainAtTheNextQuery() {
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(0, 60_000), SEARCH, meters)) {
            Supplier<MemoryGraph> restoredMidway = () -> {
                MemoryGraph g = snapshot(1).get();
                loader.forgetKept(ns -> ns.equals("ns"));
                return g;
            };
            MemoryGraph first = loader.graph("ns", 1, restoredMidway);
            assertThat(first.version()).isEqualTo(1);
            MemoryGraph second = loader.graph("ns", 1, snapshot(1));
            assertThat(second).as("built again").isNotSameAs(first);
            assertThat(builds).hasValue(2);
            assertThat(loader.graph("ns", 1, snapshot(1))).as("trusted now").isSameAs(second);

            Supplier<MemoryGraph> otherRestored = () -> {
                MemoryGraph g = snapshot(2).get();
                loader.forgetKept(ns -> ns.equals("other"));
                return g;
            };
            MemoryGraph third = loader.graph("ns", 2, otherRestored);
            assertThat(loader.graph("ns", 2, snapshot(2)))
                    .as("another namespace's restore meanwhile: built again too")
                    .isNotSameAs(third);
            assertThat(builds).hasValue(4);
            MemoryGraph fourth = loader.graph("ns", 2, snapshot(2));
            loader.forgetKept(ns -> ns.equals("other"));
            assertThat(loader.graph("ns", 2, snapshot(2)))
                    .as("another namespace's restore after the build")
                    .isSameAs(fourth);
            assertThat(builds).hasValue(4);
        }
    }

    @Test
    void aCostlySnapshotServesLongerSoThatRebuildsTakeAtMostTheirShareOfACore() {
        // a quarter of a core: a build of 200 ms serves for at least 600 ms, beyond the 0 ms staleness bound
        try (GraphLoader loader = quarterOfACore()) {
            loader.graph("ns", 1, slowSnapshot(1));
            ticker.advance(599);
            assertThat(loader.graph("ns", 2, snapshot(2)).version()).isEqualTo(1);
            assertThat(builds).hasValue(1);
            ticker.advance(1);
            assertThat(loader.graph("ns", 2, snapshot(2)).version()).isEqualTo(2);
            // a cheap build (no time at all here) serves only as long as the staleness bound: not past it
            ticker.advance(1);
            assertThat(loader.graph("ns", 3, snapshot(3)).version()).isEqualTo(3);
        }
        assertThatThrownBy(() -> new GraphLoader(
                        GraphLoader.Settings.of(0, 0)
                                .withBudget(1, Duration.ofDays(1))
                                .withBuildShare(0),
                        SEARCH,
                        meters))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void onceTheNamespaceIsQuietForABuildTimeAStaleSnapshotIsRebuiltAtOnce() {
        // a quarter of a core: the 200 ms build would serve for 600 ms while the namespace is written
        try (GraphLoader loader = quarterOfACore()) {
            loader.graph("ns", 1, null, slowSnapshot(1));
            ticker.advance(100);
            // written just now: not quiet, the costly snapshot keeps serving
            MemoryGraph written = loader.graph("ns", 2, ticker.now(), snapshot(2));
            // last written 150 ms ago, less than the build took: still served
            MemoryGraph recent = loader.graph("ns", 2, ticker.now().minusMillis(150), snapshot(2));
            assertThat(written.version()).isEqualTo(1);
            assertThat(recent.version()).isEqualTo(1);
            // last written as long ago as the build took: rebuilt by this query, well within the 600 ms
            assertThat(loader.graph("ns", 2, ticker.now().minusMillis(200), snapshot(2))
                            .version())
                    .isEqualTo(2);
            assertThat(builds).hasValue(2);
        }
    }

    @Test
    void anExpensiveSnapshotIsRebuiltInTheBackgroundWhileThePreviousOneIsServed() throws Exception {
        CountDownLatch proceed = new CountDownLatch(1);
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(0, 0), SEARCH, meters)) {
            loader.graph("ns", 1, snapshot(1));
            Supplier<MemoryGraph> slow = snapshotOnceReleased(proceed, 2);
            // every query while the build runs gets version 1 at once, and only one build is started
            for (int i = 0; i < 3; i++) {
                assertThat(loader.graph("ns", 2, slow).version()).isEqualTo(1);
            }
            proceed.countDown();
            assertThat(awaitVersion(loader, 2).version()).isEqualTo(2);
            assertThat(builds).hasValue(2);
            assertThat(released).containsExactly(1L);
            assertThat(built("background", "ok")).isEqualTo(1);
        }
    }

    /** A recent layer of version {@code version}, counted in {@code calls} with the version it was read after. */
    private static LongFunction<GraphLoader.RecentRead> recentLayer(long version, List<Long> calls) {
        return since -> {
            calls.add(since);
            return new GraphLoader.RecentRead(MemoryGraph.builder(version).build(), Set.of("p" + version));
        };
    }

    @Test
    void whileACostlySnapshotIsRebuiltQueriesReadARecentLayerAtMostTheStalenessBoundOld() throws Exception {
        CountDownLatch proceed = new CountDownLatch(1);
        List<Long> calls = new CopyOnWriteArrayList<>();
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(1000, 100), SEARCH, meters, ticker)) {
            // 200 ms to build: costlier than the 100 ms built by the query
            GraphLoader.Layers first = loader.layers("ns", 1, null, slowSnapshot(1), recentLayer(1, calls));
            assertThat(first.base().version()).isEqualTo(1);
            assertThat(first.recent()).isNull();
            Supplier<MemoryGraph> blocked = snapshotOnceReleased(proceed, 3);
            ticker.advance(1500); // past the staleness bound and the build-time bound: a background build is due

            GraphLoader.Layers layers = loader.layers("ns", 2, null, blocked, recentLayer(2, calls));
            assertThat(layers.base().version())
                    .as("the whole snapshot is rebuilt in the background")
                    .isEqualTo(1);
            assertThat(layers.recent().version()).isEqualTo(2);
            assertThat(layers.version()).isEqualTo(2);
            assertThat(calls)
                    .as("read after the version of the snapshot it lies beside")
                    .containsExactly(1L);

            // memory moves on; within the staleness bound the recent layer serves as it is
            ticker.advance(400);
            assertThat(loader.layers("ns", 3, null, blocked, recentLayer(3, calls))
                            .recent()
                            .version())
                    .isEqualTo(2);
            assertThat(calls).hasSize(1);
            // past it, the passages changed since the whole snapshot are read again in the background, the last
            // recent layer serving meanwhile
            ticker.advance(700);
            assertThat(loader.layers("ns", 3, null, blocked, recentLayer(3, calls))
                            .version())
                    .isEqualTo(2);
            GraphLoader.Layers fresh = awaitRecent(loader, 3, blocked, recentLayer(3, calls));
            assertThat(fresh.changed()).containsExactly("p3");
            assertThat(calls).containsExactly(1L, 1L);
            assertThat(built("recent", "ok")).isEqualTo(2);

            proceed.countDown();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            GraphLoader.Layers caughtUp;
            do {
                Thread.sleep(10);
                caughtUp = loader.layers(
                        "ns",
                        3,
                        null,
                        () -> {
                            throw new AssertionError("the whole snapshot is current");
                        },
                        recentLayer(3, calls));
            } while (caughtUp.base().version() != 3 && System.nanoTime() < deadline);
            assertThat(caughtUp.base().version()).isEqualTo(3);
            assertThat(caughtUp.recent())
                    .as("the whole snapshot holds what the recent layer did")
                    .isNull();
            assertThat(calls).hasSize(2);
        }
    }

    /** Asks for the namespace's layers at {@code version} until they hold it. */
    private static GraphLoader.Layers awaitRecent(
            GraphLoader loader,
            long version,
            Supplier<MemoryGraph> build,
            LongFunction<GraphLoader.RecentRead> recentSince)
            throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            GraphLoader.Layers layers = loader.layers("ns", version, null, build, recentSince);
            if (layers.version() == version) {
                return layers;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no recent layer of version " + version);
    }

    @Test
    void aStaleRecentLayerIsReadAgainInTheBackgroundWhileTheLastServesEveryQueryAtOnce() throws Exception {
        CountDownLatch proceed = new CountDownLatch(1);
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch read = new CountDownLatch(1);
        List<Long> calls = new CopyOnWriteArrayList<>();
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(1000, 100), SEARCH, meters, ticker)) {
            loader.layers("ns", 1, null, slowSnapshot(1), recentLayer(1, calls));
            ticker.advance(1500);
            Supplier<MemoryGraph> blocked = snapshotOnceReleased(proceed, 3);
            assertThat(loader.layers("ns", 2, null, blocked, recentLayer(2, calls))
                            .version())
                    .as("the first recent layer beside a snapshot is read by the query")
                    .isEqualTo(2);
            ticker.advance(1100);
            LongFunction<GraphLoader.RecentRead> slowRead = since -> {
                reading.countDown();
                try {
                    assertThat(read.await(10, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return recentLayer(3, calls).apply(since);
            };

            assertThat(loader.layers("ns", 3, null, blocked, slowRead).version())
                    .as("the last recent layer, at once")
                    .isEqualTo(2);
            assertThat(reading.await(10, TimeUnit.SECONDS)).isTrue();
            GraphLoader.Layers meanwhile = loader.layers("ns", 3, null, blocked, since -> {
                throw new AssertionError("one read at a time");
            });
            assertThat(meanwhile.version()).isEqualTo(2);

            read.countDown();
            assertThat(awaitRecent(loader, 3, blocked, since -> {
                                throw new AssertionError("read already");
                            })
                            .version())
                    .isEqualTo(3);
            assertThat(calls).containsExactly(1L, 1L);
            proceed.countDown();
        }
    }

    @Test
    void aRecentLayerThatCannotBeReadLeavesTheSnapshotToAnswerAndIsTriedAgain() throws Exception {
        CountDownLatch proceed = new CountDownLatch(1);
        List<Long> calls = new CopyOnWriteArrayList<>();
        LongFunction<GraphLoader.RecentRead> failing = since -> {
            calls.add(since);
            throw new IllegalStateException("store moved to another instance");
        };
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(1000, 100), SEARCH, meters, ticker)) {
            loader.layers("ns", 1, null, slowSnapshot(1), recentLayer(1, calls));
            ticker.advance(1500);
            Supplier<MemoryGraph> blocked = snapshotOnceReleased(proceed, 3);
            // the first beside the snapshot, read by the query: its failure is no failed answer
            GraphLoader.Layers alone = loader.layers("ns", 2, null, blocked, failing);
            assertThat(alone.base().version()).isEqualTo(1);
            assertThat(alone.recent()).isNull();
            assertThat(built("recent", "failed")).isEqualTo(1);
            assertThat(loader.layers("ns", 2, null, blocked, recentLayer(2, calls))
                            .version())
                    .as("tried again by the next query")
                    .isEqualTo(2);
            // read again in the background and failing there: the last one goes on serving, and a later query
            // tries again
            ticker.advance(1100);
            assertThat(loader.layers("ns", 3, null, blocked, failing).version()).isEqualTo(2);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (built("recent", "failed") < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(built("recent", "failed")).isEqualTo(2);
            assertThat(awaitRecent(loader, 3, blocked, recentLayer(3, calls)).version())
                    .isEqualTo(3);
            assertThat(calls).containsExactly(1L, 1L, 1L, 1L);
            proceed.countDown();
        }
    }

    @Test
    void noRecentLayerBesideACheapSnapshotOrWhenThereAreTooManyChangesOrNoneAreAllowed() throws Exception {
        List<Long> calls = new CopyOnWriteArrayList<>();
        // cheap: every stale snapshot is rebuilt by the query
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(0, 60_000), SEARCH, meters, ticker)) {
            loader.layers("ns", 1, null, slowSnapshot(1), recentLayer(1, calls));
            GraphLoader.Layers layers = loader.layers("ns", 2, null, slowSnapshot(2), recentLayer(2, calls));
            assertThat(layers.base().version()).isEqualTo(2);
            assertThat(layers.recent()).isNull();
        }
        // costly, but no recent layers configured
        try (GraphLoader loader =
                new GraphLoader(GraphLoader.Settings.of(0, 0).withRecentPassages(0), SEARCH, meters, ticker)) {
            loader.layers("ns", 1, null, slowSnapshot(1), recentLayer(1, calls));
            GraphLoader.Layers layers = loader.layers("ns", 2, null, snapshot(2), recentLayer(2, calls));
            assertThat(layers.recent()).isNull();
        }
        assertThat(calls).isEmpty();
        // costly, and too much changed since for a recent layer: none, and not asked again within the staleness bound
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(1000, 0), SEARCH, meters, ticker)) {
            loader.layers("ns", 1, null, slowSnapshot(1), recentLayer(1, calls));
            ticker.advance(1500);
            CountDownLatch proceed = new CountDownLatch(1);
            Supplier<MemoryGraph> blocked = snapshotOnceReleased(proceed, 2);
            LongFunction<GraphLoader.RecentRead> tooMany = since -> {
                calls.add(since);
                return null;
            };
            assertThat(loader.layers("ns", 2, null, blocked, tooMany).recent()).isNull();
            ticker.advance(500);
            assertThat(loader.layers("ns", 2, null, blocked, tooMany).recent()).isNull();
            assertThat(calls).containsExactly(1L);
            assertThat(built("recent", "ok"))
                    .as("only layers that were built are timed")
                    .isZero();
            proceed.countDown();
        }
    }

    @Test
    void aFailedBackgroundBuildIsTriedAgainByALaterQuery() throws Exception {
        try (GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(0, 0), SEARCH, meters)) {
            loader.graph("ns", 1, snapshot(1));
            AtomicInteger attempts = new AtomicInteger();
            Supplier<MemoryGraph> failing = () -> {
                attempts.incrementAndGet();
                throw new IllegalStateException("store moved to another instance");
            };
            assertThat(loader.graph("ns", 2, failing).version()).isEqualTo(1);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (attempts.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(attempts).hasValue(1);
            long deadlineMeter = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (built("background", "failed") == 0 && System.nanoTime() < deadlineMeter) {
                Thread.sleep(10);
            }
            assertThat(built("background", "failed")).isEqualTo(1);
            // the failed build is over: the next stale query starts another, which succeeds
            deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (loader.graph("ns", 2, snapshot(2)).version() != 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(loader.graph("ns", 2, snapshot(2)).version()).isEqualTo(2);
        }
    }

    @Test
    void closingWaitsForABackgroundBuildAndReleasesEverySnapshot() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        GraphLoader loader = new GraphLoader(GraphLoader.Settings.of(0, 0), SEARCH, meters);
        loader.graph("ns", 1, snapshot(1));
        Supplier<MemoryGraph> slow = () -> {
            started.countDown();
            try {
                assertThat(proceed.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                throw new IllegalStateException("the build was interrupted", e);
            }
            return snapshot(2).get();
        };
        assertThat(loader.graph("ns", 2, slow).version()).isEqualTo(1);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        Thread closing = new Thread(loader::close);
        closing.start();
        Thread.sleep(50);
        assertThat(closing.isAlive()).as("close waits for the running build").isTrue();
        proceed.countDown();
        closing.join(10_000);
        assertThat(closing.isAlive()).isFalse();
        // the build finished uninterrupted; the snapshot it made and the one served before are both let go
        assertThat(builds).hasValue(2);
        assertThat(released).containsExactlyInAnyOrder(1L, 2L);
    }

    /** A snapshot of one passage with a vector of {@code dims} floats, so its size is known. */
    private Supplier<MemoryGraph> sized(long version, int dims) {
        return () -> {
            MemoryGraphBuilder b = MemoryGraph.builder(version)
                    .indexer(batches -> new VectorIndexer.Indexed(
                            VectorIndexer.EXACT.index(batches).byKind(), () -> released.add(version)));
            float[] v = new float[dims];
            v[0] = 1;
            b.passage(new Passage("p", "d", "t", List.of(), "text", "memory", 0, 4), v);
            return b.build();
        };
    }

    @Test
    void snapshotsStayWithinTheMemoryBudgetLeastRecentlyQueriedFirst() {
        long one = sized(0, 10_000).get().estimatedBytes();
        released.clear();
        try (GraphLoader loader = new GraphLoader(
                GraphLoader.Settings.of(60_000, 60_000).withBudget((long) (2.5 * one), Duration.ofDays(1)),
                SEARCH,
                meters)) {
            loader.graph("a", 1, sized(1, 10_000));
            loader.graph("b", 2, sized(2, 10_000));
            loader.graph("a", 1, sized(1, 10_000)); // a is now the more recently queried
            assertThat(loader.cachedNamespaces()).containsExactlyInAnyOrder("a", "b");

            loader.graph("c", 3, sized(3, 10_000));

            assertThat(loader.cachedNamespaces()).containsExactlyInAnyOrder("a", "c");
            assertThat(released).containsExactly(2L); // b's snapshot let go of its indexes
            assertThat(loader.cachedBytes()).isLessThanOrEqualTo((long) (2.5 * one));

            // one snapshot larger than the whole budget is still served (and kept alone)
            loader.graph("huge", 4, sized(4, 100_000));
            assertThat(loader.cachedNamespaces()).containsExactly("huge");
        }
    }

    @Test
    void aSnapshotNotQueriedForTheIdleTimeLeaves() throws Exception {
        try (GraphLoader loader = new GraphLoader(
                GraphLoader.Settings.of(60_000, 60_000).withBudget(Long.MAX_VALUE, Duration.ofMillis(50)),
                SEARCH,
                meters,
                ticker)) {
            loader.graph("moved-away", 1, snapshot(1));
            ticker.advance(120);

            loader.graph("here", 2, snapshot(2));

            assertThat(loader.cachedNamespaces()).containsExactly("here");
            assertThat(released).containsExactly(1L);
        }
    }

    @Test
    void aNamespaceThatLeavesClosesItsVectorIndexWhichOpensAgainWithItsVectors(@TempDir Path dir) throws Exception {
        float[][] vectors = {{1, 0}, {0, 1}, {0.6f, 0.8f}};
        VectorIndexer.Batch batch = new VectorIndexer.Batch("passage", List.of("a", "b", "c"), vectors);
        try (GraphLoader loader = new GraphLoader(
                GraphLoader.Settings.of(60_000, 60_000)
                        .withIndexDir(dir)
                        .withBudget(Long.MAX_VALUE, Duration.ofMillis(50)),
                new VectorSearch(1, 100),
                meters,
                ticker)) {
            loader.graph("moved-away", 1, snapshot(1));
            loader.vectors("moved-away").index(List.of(batch)).release().run(); // as its snapshot builds do
            assertThat(loader.openVectorIndexes()).containsExactly("moved-away");
            ticker.advance(120);

            loader.graph("here", 2, snapshot(2));

            assertThat(loader.openVectorIndexes()).doesNotContain("moved-away");
            // its writer let go of the directory: the index opens again, with what was written
            try (HnswVectors again = new HnswVectors(dir.resolve("moved-away"), 1, 100)) {
                VectorIndexer.Indexed indexed = again.index(List.of(batch));
                assertThat(again.written()).as("nothing to write again").isZero();
                assertThat(indexed.byKind().get("passage").nearest(new float[] {1, 0}, 1))
                        .extracting(Retrieval.Scored::passage)
                        .containsExactly(0);
                indexed.release().run();
            }
        }
    }
    /**
     * With background writes, a snapshot's vectors are written by the loader's indexing thread: the snapshot is
     * served first, and closing the loader with a write queued neither hangs nor loses what was written.
     */
    @Test
    void backgroundWritesAreWrittenByTheLoadersThreadAndSurviveItsClose(@TempDir Path dir) throws Exception {
        float[][] vectors = new float[40][];
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < vectors.length; i++) {
            double a = i * 0.15;
            vectors[i] = new float[] {(float) Math.cos(a), (float) Math.sin(a)};
            keys.add("p" + i);
        }
        VectorSearch background = new VectorSearch(30, 100, 16, 64, true);
        try (GraphLoader loader =
                new GraphLoader(GraphLoader.Settings.of(60_000, 60_000).withIndexDir(dir), background, meters)) {
            HnswVectors hnsw = loader.vectors("ns");
            hnsw.index(List.of(new VectorIndexer.Batch("passage", keys.subList(0, 35), Arrays.copyOf(vectors, 35))))
                    .release()
                    .run(); // more than 30 waiting: written by the snapshot itself
            VectorIndexer.Indexed served = hnsw.index(List.of(new VectorIndexer.Batch("passage", keys, vectors)));
            assertThat(served.byKind().get("passage").nearest(vectors[38], 1))
                    .extracting(Retrieval.Scored::passage)
                    .containsExactly(38);
            hnsw.awaitWritten();
            assertThat(hnsw.written()).isEqualTo(40);
            assertThat(hnsw.waiting()).as("written since").isZero();
            served.release().run();
        }
        try (HnswVectors again = new HnswVectors(dir.resolve("ns"), 30, 100)) {
            VectorIndexer.Indexed indexed = again.index(List.of(new VectorIndexer.Batch("passage", keys, vectors)));
            assertThat(again.written()).as("all forty were committed at close").isZero();
            indexed.release().run();
        }
    }

    /**
     * An instance killed (SIGKILL) while its snapshots' vector arenas were open leaves their files behind: they are
     * scratch, and the next loader on the same directory deletes them before it builds anything.
     */
    @Test
    void arenaFilesLeftByAKilledInstanceAreDeletedAtStart(@TempDir Path dir) throws Exception {
        Path arenas = dir.resolve(VectorIndexes.ARENAS);
        Files.createDirectories(arenas);
        Path left = Files.write(arenas.resolve("wiki@8123.f32"), new byte[4096]);
        try (GraphLoader loader =
                new GraphLoader(GraphLoader.Settings.of(0, 60_000).withIndexDir(dir), SEARCH, meters)) {
            assertThat(left).doesNotExist();
            assertThat(loader.cachedNamespaces()).isEmpty();
        }
    }
}
