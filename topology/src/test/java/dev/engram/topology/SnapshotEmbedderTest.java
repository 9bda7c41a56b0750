package dev.engram.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.query.GraphLoader;
import dev.engram.query.VectorSearch;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.NamespaceState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Query snapshots compare the query's vector only with vectors of the same model. */
class SnapshotEmbedderTest {

    private static final Topics TOPICS = new Topics("engram.");

    @TempDir
    Path stateDir;

    /** The whole topology over real RocksDB stores in the test's state directory. */
    private TopologyTestDriver driver(String applicationId) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        return new TopologyTestDriver(
                EngramTopology.build(
                        EngramTopology.Settings.of(TOPICS, 64 * 1024, 40), Understanders.embedded(), Meters.detached()),
                props);
    }

    /**
     * A clock the test sets: its monotonic time moves on a millisecond at each reading (so that a build takes one),
     * and its wall-clock time is what the test says.
     */
    private static final class SetTicker implements GraphLoader.Ticker {
        private final AtomicLong nanos = new AtomicLong();
        private final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());

        @Override
        public long nanoTime() {
            return nanos.addAndGet(1_000_000);
        }

        @Override
        public Instant now() {
            return now.get();
        }

        void set(Instant at) {
            now.set(at);
        }
    }

    private final SetTicker ticker = new SetTicker();

    /** A loader that rebuilds a changed namespace's snapshot at once, but for {@code buildShare}. */
    private GraphLoader loader(String embedder, double buildShare) {
        return new GraphLoader(
                GraphLoader.Settings.of(0, 60_000).withEmbedder(embedder).withBuildShare(buildShare),
                new VectorSearch(50_000, 100),
                Meters.detached(),
                ticker);
    }

    @Test
    void passagesEmbeddedByAnotherModelAreLeftOutOfSnapshots() {
        try (TopologyTestDriver driver = driver("snapshot-embedder-test")) {
            TestInputTopic<byte[], byte[]> documents = TestTopics.input(driver, TOPICS.documents());
            documents.pipeInput(
                    "a".getBytes(StandardCharsets.UTF_8),
                    TestDocuments.upsert("wiki", "a", "", "Ada Lovelace wrote the first program."));
            documents.pipeInput(
                    "b".getBytes(StandardCharsets.UTF_8),
                    TestDocuments.upsert("wiki", "b", "", "Charles Babbage designed the Analytical Engine."));
            MemoryReader memory = new MemoryReader(name -> driver.<String, Object>getKeyValueStore(name));
            NamespaceState state = memory.namespace("wiki").orElseThrow();
            String model = Understanders.embedded().embedder().modelId();

            assertThat(snapshotPassages(model, state, memory)).isEqualTo(2);
            // the namespace was filled before ENGRAM_EMBEDDER changed: its vectors are not the query's kind
            assertThat(snapshotPassages("bge-small-en-v1.5-q", state, memory)).isZero();
            // a loader that does not know its embedder keeps every passage
            assertThat(snapshotPassages(null, state, memory)).isEqualTo(2);
        }
    }

    /**
     * The memory step stamps the namespace's state with when it last changed, and the loader reads it: once the
     * namespace has been quiet for as long as the last build took, the stale snapshot is rebuilt although the build
     * share (1 %) would have it serve for 99 times its build.
     */
    @Test
    void aQuietNamespaceGetsItsStaleSnapshotRebuiltAtOnce() {
        try (TopologyTestDriver driver = driver("snapshot-quiet-test");
                GraphLoader loader = loader(null, 0.01)) {
            TestInputTopic<byte[], byte[]> documents = TestTopics.input(driver, TOPICS.documents());
            documents.pipeInput(
                    "a".getBytes(StandardCharsets.UTF_8),
                    TestDocuments.upsert("wiki", "a", "", "Ada Lovelace wrote the first program."));
            MemoryReader memory = new MemoryReader(name -> driver.<String, Object>getKeyValueStore(name));
            // the build takes one millisecond of the loader's clock: the snapshot serves for 99 while memory moves on
            MemoryGraph first = loader.graph("wiki", memory.namespace("wiki").orElseThrow(), memory);
            documents.pipeInput(
                    "b".getBytes(StandardCharsets.UTF_8),
                    TestDocuments.upsert("wiki", "b", "", "Charles Babbage designed the Analytical Engine."));
            NamespaceState written = memory.namespace("wiki").orElseThrow();
            assertThat(written.version()).isGreaterThan(first.version());
            assertThat(written.updatedAt()).isBetween(Instant.now().minusSeconds(60), Instant.now());

            ticker.set(written.updatedAt());
            assertThat(loader.graph("wiki", written, memory).version())
                    .as("just written: the snapshot serves on")
                    .isEqualTo(first.version());
            // quiet for longer than the first build took, far less than the 99 builds it would serve for
            ticker.set(written.updatedAt().plusMillis(2));
            assertThat(loader.graph("wiki", written, memory).version()).isEqualTo(written.version());
        }
    }

    private int snapshotPassages(String embedder, NamespaceState state, MemoryReader memory) {
        try (GraphLoader loader = loader(embedder, 1.0)) {
            return loader.graph("wiki", state, memory).passageCount();
        }
    }
}
