package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Compensation;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.JsonSerde;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Span;
import dev.engram.schemas.Understanding;
import dev.engram.schemas.UnderstandingEvent;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.Processor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repair loop re-emits the objects a mirror rejected once their backoff has passed, a few per round: a namespace
 * whose rejected objects are not due (or never taken) does not hold up the due objects of namespaces that sort after
 * it, and the rejected objects are counted by namespace.
 */
class RepairLoopTest {

    private static final String TOPIC = "understandings";
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration INTERVAL = Duration.ofMinutes(1);
    private static final JsonSerde<UnderstandingEvent> EVENTS = JsonSerde.of(UnderstandingEvent.class);

    @TempDir
    Path dir;

    private final List<MirrorRecord> mirrored = new ArrayList<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private TopologyTestDriver driver;
    private TestInputTopic<String, UnderstandingEvent> input;

    @BeforeEach
    void start() {
        Topology topology = new Topology();
        topology.addSource("in", new StringDeserializer(), EVENTS.deserializer(), TOPIC);
        topology.addProcessor(
                "construct",
                ConstructProcessor.supplier(new Meters(registry), ConstructProcessor.Fault.NONE, INTERVAL, 2),
                "in");
        topology.addProcessor(
                "capture",
                () -> (Processor<Void, Emission, Void, Void>) r -> {
                    if (r.value() instanceof Emission.Mirrored m) {
                        mirrored.add(m.record());
                    }
                },
                "construct");
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "repairs");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, dir.toString());
        driver = new TopologyTestDriver(topology, props, NOW);
        input = driver.createInputTopic(TOPIC, new StringSerializer(), EVENTS.serializer());
    }

    @AfterEach
    void close() {
        driver.close();
    }

    @Test
    void objectsNotDueInANamespaceThatSortsFirstNeverHoldUpTheDueObjectsAfterIt() {
        List<MirrorRecord> late = remember("zzz", "z1", "Grace Hopper wrote a compiler.", "Grace Hopper");
        List<MirrorRecord> early = remember("aaa", "a1", "Ada Lovelace met Charles Babbage.", "Ada Lovelace");
        MirrorRecord zPassage = passageOf(late);

        compensate(zPassage); // rejected now: due after a minute
        driver.advanceWallClockTime(Duration.ofSeconds(50));
        early.forEach(this::compensate); // rejected 50 s later: three or more objects, not due at the next round
        assertThat(early).hasSizeGreaterThan(2);
        mirrored.clear();

        driver.advanceWallClockTime(Duration.ofSeconds(11)); // the round at one minute
        assertThat(mirrored)
                .as("the due object of the namespace after the ones not due is re-emitted")
                .singleElement()
                .satisfies(r -> {
                    assertThat(r.namespace()).isEqualTo("zzz");
                    assertThat(r.id()).isEqualTo(zPassage.id());
                    assertThat(r.repair()).isTrue();
                });
        assertThat(rejected("aaa")).isEqualTo(early.size());
        assertThat(rejected("zzz")).isEqualTo(1);

        // later rounds take the due ones two at a time, each round after where the last stopped: all come back
        mirrored.clear();
        for (int round = 0; round < 4; round++) {
            driver.advanceWallClockTime(INTERVAL);
        }
        assertThat(mirrored.stream().filter(r -> r.namespace().equals("aaa")).map(MirrorRecord::id))
                .containsAll(early.stream().map(MirrorRecord::id).toList());
    }

    @Test
    void aRepairedObjectLeavesTheCount() {
        MirrorRecord passage = passageOf(remember("wiki", "p1", "Ada Lovelace met Charles Babbage.", "Ada Lovelace"));
        compensate(passage);
        driver.advanceWallClockTime(INTERVAL);
        assertThat(rejected("wiki")).isEqualTo(1);
        report(passage, Compensation.Outcome.REPAIRED);
        driver.advanceWallClockTime(INTERVAL);
        assertThat(registry.find(Meters.MIRROR_REJECTED)
                        .tag("namespace", "wiki")
                        .gauge())
                .as("no rejected object left: the namespace leaves the gauge")
                .isNull();
    }

    /** Remembers one passage naming {@code name}; returns the mirror records it caused. */
    private List<MirrorRecord> remember(String ns, String passageId, String text, String name) {
        mirrored.clear();
        int at = text.indexOf(name);
        Extraction.Entity entity = new Extraction.Entity(
                name, EntityType.PERSON, "", List.of(), List.of(new Span(at, at + name.length())));
        PassageEvent.Upsert p = new PassageEvent.Upsert(
                ns, "doc", 1, passageId, 0, "hash-" + passageId, "T", List.of(), text, 0, text.length(), null, null);
        Extraction x = new Extraction(
                text, List.of(entity), List.of(), List.of(), List.of(), "hand/1", null, Extraction.TokenUsage.NONE);
        Embeddings e = new Embeddings(
                new float[] {1, 0, 0}, new float[] {1, 0, 0}, List.of(new float[] {1, 1, 0}), List.of(), List.of());
        input.pipeInput(ns, new UnderstandingEvent.Understood(p, new Understanding(x, e, "test-embedder")));
        assertThat(mirrored).isNotEmpty();
        return List.copyOf(mirrored);
    }

    private static MirrorRecord passageOf(List<MirrorRecord> records) {
        return records.stream()
                .filter(r -> r.kind() == MirrorRecord.Kind.PASSAGE)
                .findFirst()
                .orElseThrow();
    }

    private void compensate(MirrorRecord r) {
        report(r, Compensation.Outcome.COMPENSATED);
    }

    private void report(MirrorRecord r, Compensation.Outcome outcome) {
        Compensation c = new Compensation(
                r.namespace(),
                r.version(),
                Compensation.Sink.QDRANT,
                r.kind(),
                "upsert",
                r.id(),
                outcome,
                "wrong dimension",
                1,
                NOW);
        input.pipeInput(r.namespace(), new UnderstandingEvent.MirrorFeedback(c, null, null));
    }

    private double rejected(String ns) {
        Gauge g = registry.find(Meters.MIRROR_REJECTED).tag("namespace", ns).gauge();
        assertThat(g).as("rejected objects of %s", ns).isNotNull();
        return g.value();
    }
}
