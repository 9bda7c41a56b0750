package dev.engram.sinks;

import static dev.engram.sinks.MirrorRecords.document;
import static dev.engram.sinks.MirrorRecords.passage;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.metrics.Meters;
import dev.engram.schemas.Compensation;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Json;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.schemas.MirrorRecord.VectorKind;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sink loop over a partition of the mirror topic (Kafka's mock consumer and producer), writing to a real Neo4j and
 * the Qdrant stand-in: a sink that dies between the graph write and the vector write resumes without writing the graph
 * again and without losing a vector; a rejected vector is undone in the graph and compensated; a record that is no
 * mirror record is dead-lettered and the partition moves on.
 */
class MirrorSinkTest {

    private static final String TOPIC = "mirror";
    private static final int MAX_REQUEST_BYTES = 1 << 20;
    private final TopicPartition tp = new TopicPartition(TOPIC, 0);
    private final String ns = "sink-" + UUID.randomUUID();
    private final String group = "group-" + ns;
    private final QdrantStandIn standIn = new QdrantStandIn();
    private Server server;
    private Neo4jMirror graph;
    private QdrantMirror qdrant;

    /** A process dying: nothing after it runs. */
    static final class Crash extends Error {
        private static final long serialVersionUID = 1L;
    }

    @BeforeEach
    void start() throws IOException {
        // Qdrant refuses a request over its size limit (service.max_request_size_mb, 32 MiB by default) as
        // RESOURCE_EXHAUSTED; the stand-in's limit is smaller, so a test can pass it cheaply
        ServerBuilder<?> builder = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .maxInboundMessageSize(MAX_REQUEST_BYTES);
        standIn.services().forEach(builder::addService);
        server = builder.build().start();
        qdrant = new QdrantMirror(
                new QdrantMirror.Settings("localhost", server.getPort(), false, null, ns + "_", Duration.ofSeconds(5)));
        graph = new Neo4jMirror(
                new Neo4jMirror.Settings(Neo4jServer.shared().uri(), null, null, null, Duration.ofSeconds(10)));
    }

    @AfterEach
    void stop() throws InterruptedException {
        graph.close();
        qdrant.close();
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private long passagesInGraph() {
        return graph.read(
                        "MATCH (p:Passage {namespace: $ns}) WHERE p.version IS NOT NULL RETURN count(p)",
                        Map.of("ns", ns))
                .get(0)
                .get(0)
                .asLong();
    }

    private MockConsumer<String, byte[]> consumer(List<byte[]> values) {
        return consumer(values, 0);
    }

    /**
     * A partition whose records before {@code start} retention has deleted. Like a broker (and unlike a plain
     * {@link MockConsumer}), it returns records again after a seek back.
     */
    private MockConsumer<String, byte[]> consumer(List<byte[]> values, long start) {
        return consumer(values, start, new ArrayList<>(), () -> {});
    }

    /**
     * Like {@link #consumer(List, long)}, noting in {@code commits} each offset committed to Kafka, and running {@code
     * beforeAssignment} at the first poll, just before the partition is assigned (its records are there even when the
     * assignment fails, as in Kafka's consumer).
     */
    private MockConsumer<String, byte[]> consumer(
            List<byte[]> values, long start, List<Long> commits, Runnable beforeAssignment) {
        MockConsumer<String, byte[]> c = new MockConsumer<>("earliest") {
            @Override
            public synchronized void commitAsync(
                    Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
                offsets.values().forEach(o -> commits.add(o.offset()));
                super.commitAsync(offsets, callback);
            }

            @Override
            public synchronized void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets, Duration timeout) {
                offsets.values().forEach(o -> commits.add(o.offset()));
                super.commitSync(offsets, timeout);
            }

            @Override
            public synchronized void seek(TopicPartition partition, long offset) {
                super.seek(partition, offset);
                for (long o = Math.max(offset, start); o < start + values.size(); o++) {
                    addRecord(new ConsumerRecord<>(TOPIC, 0, o, ns, values.get((int) (o - start))));
                }
            }

            @Override
            public synchronized void seekToBeginning(Collection<TopicPartition> partitions) {
                super.seekToBeginning(partitions);
                if (partitions.contains(tp)) {
                    seek(tp, start);
                }
            }
        };
        c.updateBeginningOffsets(Map.of(tp, start));
        c.updateEndOffsets(Map.of(tp, start + values.size()));
        c.schedulePollTask(() -> {
            beforeAssignment.run();
            try {
                c.rebalance(List.of(tp));
            } finally {
                for (int i = 0; i < values.size(); i++) {
                    c.addRecord(new ConsumerRecord<>(TOPIC, 0, start + i, ns, values.get(i)));
                }
            }
        });
        return c;
    }

    private static MockProducer<String, byte[]> producer() {
        return new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
    }

    private MirrorSink sink(MockConsumer<String, byte[]> c, MockProducer<String, byte[]> p, VectorMirror vectors) {
        return sink(c, p, vectors, Meters.detached());
    }

    private MirrorSink sink(
            MockConsumer<String, byte[]> c, MockProducer<String, byte[]> p, VectorMirror vectors, Meters meters) {
        return new MirrorSink(
                new MirrorSink.Settings(
                        TOPIC,
                        "compensations",
                        "dead-letters",
                        group,
                        100,
                        1,
                        Duration.ofMillis(10),
                        Duration.ofMillis(200)),
                c,
                p,
                graph,
                vectors,
                meters,
                Clock.systemUTC());
    }

    private static Throwable runUntil(MirrorSink sink, BooleanSupplier done) throws InterruptedException {
        Throwable[] died = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                sink.run();
            } catch (Throwable e) {
                died[0] = e;
            }
        });
        t.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (t.isAlive() && !done.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        sink.close();
        t.join(10_000);
        return died[0];
    }

    private List<byte[]> records(MirrorRecord... records) {
        List<byte[]> out = new ArrayList<>();
        for (MirrorRecord r : records) {
            out.add(Json.toBytes(r));
        }
        return out;
    }

    @Test
    void theSinksConsumerReadsOnlyCommittedRecordsInBatchesAndLeavesItsPositionsToTheSink() {
        MirrorSink.Settings settings = new MirrorSink.Settings(
                TOPIC, "compensations", "dead-letters", "g", 250, 1, Duration.ofMillis(10), Duration.ofMillis(200));
        Map<String, Object> c =
                settings.consumerConfig(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "broker:9092"), 1 << 20);
        assertThat(c)
                .containsEntry(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "broker:9092")
                .containsEntry(ConsumerConfig.GROUP_ID_CONFIG, "g")
                .containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
                .containsEntry(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false)
                .containsEntry(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest")
                .containsEntry(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 250)
                .containsEntry(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 1 << 20);
        // one a consumer accepts, with the system's receive buffer
        Map<String, Object> withDeserializers = new HashMap<>(c);
        withDeserializers.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        withDeserializers.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        assertThat(new ConsumerConfig(withDeserializers).getInt(ConsumerConfig.RECEIVE_BUFFER_CONFIG))
                .isEqualTo(-1);

        // an operator's settings tune the fetch, never what the sink's guarantees rest on
        Map<String, Object> operator = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                "broker:9092",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_uncommitted",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                true,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "latest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                10,
                ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG,
                65_536,
                ConsumerConfig.RECEIVE_BUFFER_CONFIG,
                1 << 20);
        assertThat(settings.consumerConfig(operator, 1 << 20))
                .containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
                .containsEntry(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false)
                .containsEntry(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest")
                .containsEntry(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 250)
                .containsEntry(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 65_536)
                .containsEntry(ConsumerConfig.RECEIVE_BUFFER_CONFIG, 1 << 20);
    }

    @Test
    void aSinkKilledBetweenTheGraphAndTheVectorWriteResumesWithoutReplayingTheGraph() throws Exception {
        List<byte[]> values = records(
                document(ns, "doc", 1, "T"),
                passage(ns, "p1", "doc", 2, "one", 4),
                passage(ns, "p2", "doc", 3, "two", 4));
        VectorMirror dying = new Delegating(qdrant) {
            @Override
            public Map<MirrorRecord, String> apply(List<MirrorRecord> records) {
                throw new Crash();
            }
        };
        Throwable died = runUntil(sink(consumer(values), producer(), dying), () -> false);
        assertThat(died).isInstanceOf(Crash.class);
        assertThat(passagesInGraph()).isEqualTo(2);
        assertThat(graph.position(group, TOPIC, 0)).isEqualTo(new Neo4jMirror.Position(3, -1));
        assertThat(qdrant.versions(ns).get(VectorKind.PASSAGE)).isEmpty();

        // a replay of the graph's writes would put the text back
        graph.read("MATCH (p:Passage {namespace: $ns}) SET p.text = 'untouched since'", Map.of("ns", ns));
        Throwable again = runUntil(sink(consumer(values), producer(), qdrant), () -> graph.position(group, TOPIC, 0)
                .equals(new Neo4jMirror.Position(3, 3)));
        assertThat(again).isNull();
        assertThat(qdrant.versions(ns).get(VectorKind.PASSAGE)).isEqualTo(Map.of("p1", 2L, "p2", 3L));
        assertThat(graph.read(
                                "MATCH (p:Passage {namespace: $ns}) WHERE p.text = 'untouched since' RETURN count(p)",
                                Map.of("ns", ns))
                        .get(0)
                        .get(0)
                        .asLong())
                .as("the graph was not written again")
                .isEqualTo(2);
        assertThat(
                        graph
                                .read(
                                        "MATCH (p:Passage {namespace: $ns}) RETURN size(p.qdrantPoints) AS n",
                                        Map.of("ns", ns))
                                .stream()
                                .map(r -> r.get("n").asLong())
                                .toList())
                .containsOnly(2L);
    }

    @Test
    void aRejectedVectorIsUndoneInTheGraphAndCompensated() throws Exception {
        MirrorRecord bad = passage(ns, "p1", "doc", 2, "bad", 3); // the collection takes 4 dimensions
        List<byte[]> values = records(document(ns, "doc", 1, "T"), passage(ns, "p0", "doc", 2, "good", 4), bad);
        MockProducer<String, byte[]> p = producer();
        Throwable died = runUntil(sink(consumer(values), p, qdrant), () -> graph.position(group, TOPIC, 0)
                .equals(new Neo4jMirror.Position(3, 3)));
        assertThat(died).isNull();
        List<Compensation> compensations = p.history().stream()
                .filter(r -> r.topic().equals("compensations"))
                .map(r -> Json.fromBytes(r.value(), Compensation.class))
                .toList();
        assertThat(compensations).singleElement().satisfies(c -> {
            assertThat(c.outcome()).isEqualTo(Compensation.Outcome.COMPENSATED);
            assertThat(c.subjectId()).isEqualTo("p1");
            assertThat(c.kind()).isEqualTo(Kind.PASSAGE);
            assertThat(c.sink()).isEqualTo(Compensation.Sink.QDRANT);
            assertThat(c.reason()).contains("dimension");
        });
        assertThat(graph.digests(ns).get(Kind.PASSAGE)).isEqualTo(Digests.of(Map.of("p0", 2L)));
        assertThat(qdrant.versions(ns).get(VectorKind.PASSAGE)).isEqualTo(Map.of("p0", 2L));
    }

    @Test
    void aRecordThatIsNoMirrorRecordIsDeadLetteredAndThePartitionMovesOn() throws Exception {
        List<byte[]> values = new ArrayList<>();
        values.add("{not json".getBytes(StandardCharsets.UTF_8));
        values.add(null);
        values.addAll(records(passage(ns, "p1", "doc", 2, "after", 4)));
        MockProducer<String, byte[]> p = producer();
        Throwable died = runUntil(sink(consumer(values), p, qdrant), () -> graph.position(group, TOPIC, 0)
                .equals(new Neo4jMirror.Position(3, 3)));
        assertThat(died).isNull();
        List<ProducerRecord<String, byte[]>> letters = p.history().stream()
                .filter(r -> r.topic().equals("dead-letters"))
                .toList();
        assertThat(letters).hasSize(2).allSatisfy(r -> assertThat(
                        Json.fromBytes(r.value(), DeadLetter.class).cause())
                .isEqualTo(DeadLetter.Cause.UNDECODABLE));
        assertThat(qdrant.versions(ns).get(VectorKind.PASSAGE)).isEqualTo(Map.of("p1", 2L));
    }

    @Test
    void aRecordNeo4jRejectsIsReportedEvenWhenTheReportFailsOnce() throws Exception {
        // Neo4j refuses to index an id this long (its key is part of the node key constraint)
        String huge = "p2-" + "x".repeat(40_000);
        List<byte[]> values = records(
                document(ns, "doc", 1, "T"),
                passage(ns, "p1", "doc", 2, "one", 4),
                passage(ns, huge, "doc", 3, "two", 4));
        AtomicBoolean failedOnce = new AtomicBoolean();
        MockProducer<String, byte[]> p =
                new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer()) {
                    @Override
                    public synchronized Future<RecordMetadata> send(ProducerRecord<String, byte[]> r) {
                        if (r.topic().equals("compensations") && failedOnce.compareAndSet(false, true)) {
                            return CompletableFuture.failedFuture(new TimeoutException("the broker did not answer"));
                        }
                        return super.send(r);
                    }
                };
        Throwable died = runUntil(sink(consumer(values), p, null), () -> graph.position(group, TOPIC, 0)
                .equals(new Neo4jMirror.Position(3, 3)));
        assertThat(died).isNull();
        assertThat(failedOnce).isTrue();
        assertThat(p.history().stream()
                        .filter(r -> r.topic().equals("compensations"))
                        .map(r -> Json.fromBytes(r.value(), Compensation.class)))
                .as("the batch was read again after the pause, and its rejection reported again")
                .singleElement()
                .satisfies(c -> {
                    assertThat(c.subjectId()).isEqualTo(huge);
                    assertThat(c.sink()).isEqualTo(Compensation.Sink.NEO4J);
                    assertThat(c.outcome()).isEqualTo(Compensation.Outcome.COMPENSATED);
                });
        assertThat(graph.digests(ns).get(Kind.PASSAGE)).isEqualTo(Digests.of(Map.of("p1", 2L)));
    }

    @Test
    void aBatchThatFailsUnexpectedlyIsReadAgainNeverSkipped() throws Exception {
        List<byte[]> values = new ArrayList<>();
        values.add("{not json".getBytes(StandardCharsets.UTF_8));
        values.addAll(records(document(ns, "doc", 1, "T"), passage(ns, "p1", "doc", 2, "after", 4)));
        AtomicBoolean thrown = new AtomicBoolean();
        MockProducer<String, byte[]> p =
                new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer()) {
                    @Override
                    public synchronized Future<RecordMetadata> send(ProducerRecord<String, byte[]> r) {
                        if (thrown.compareAndSet(false, true)) {
                            throw new IllegalStateException("a failure no one planned for");
                        }
                        return super.send(r);
                    }
                };
        Throwable died = runUntil(sink(consumer(values), p, qdrant), () -> graph.position(group, TOPIC, 0)
                .equals(new Neo4jMirror.Position(3, 3)));
        assertThat(died).isNull();
        assertThat(thrown).isTrue();
        assertThat(p.history())
                .filteredOn(r -> r.topic().equals("dead-letters"))
                .hasSize(1);
        assertThat(passagesInGraph()).isEqualTo(1);
        assertThat(qdrant.versions(ns).get(VectorKind.PASSAGE)).isEqualTo(Map.of("p1", 2L));
    }

    @Test
    void aPartitionAssignedWhileNeo4jIsAwayWaitsForItsPositionAndIsNeverSkipped() throws Exception {
        List<byte[]> values = records(
                document(ns, "doc", 1, "T"),
                passage(ns, "p1", "doc", 2, "one", 4),
                passage(ns, "p2", "doc", 3, "two", 4));
        Neo4jServer neo4j = Neo4jServer.shared();
        // the sink starts with Neo4j up; it goes away just before the partition is assigned (as when a rebalance comes
        // while Neo4j is down) and comes back a little later, the records being there all along
        Thread back = new Thread(() -> {
            try {
                Thread.sleep(1_500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            neo4j.start();
        });
        MockConsumer<String, byte[]> away = consumer(values, 0, new ArrayList<>(), () -> {
            neo4j.stop();
            back.start();
        });
        try {
            Throwable died = runUntil(sink(away, producer(), null), () -> {
                try {
                    return graph.position(group, TOPIC, 0).equals(new Neo4jMirror.Position(3, 3));
                } catch (RuntimeException neo4jAway) {
                    return false;
                }
            });
            assertThat(died).isNull();
            assertThat(passagesInGraph()).isEqualTo(2);
        } finally {
            back.join(10_000);
            neo4j.start();
        }
    }

    @Test
    void aGraphOnlySinkDeadLettersARecordBeforeItsPositionPassesIt() throws Exception {
        List<byte[]> values = new ArrayList<>();
        values.add("{not json".getBytes(StandardCharsets.UTF_8));
        values.addAll(records(document(ns, "doc", 1, "T")));
        // the process dies when it waits for its first dead letter, which never reached the broker
        MockProducer<String, byte[]> dying =
                new MockProducer<>(false, null, new StringSerializer(), new ByteArraySerializer()) {
                    @Override
                    public synchronized void flush() {
                        throw new Crash();
                    }
                };
        Throwable died = runUntil(sink(consumer(values), dying, null), () -> false);
        assertThat(died).isInstanceOf(Crash.class);
        assertThat(graph.position(group, TOPIC, 0))
                .as("the position did not pass a record whose dead letter was not written")
                .isEqualTo(Neo4jMirror.Position.NONE);

        MockProducer<String, byte[]> p = producer();
        Throwable again = runUntil(sink(consumer(values), p, null), () -> graph.position(group, TOPIC, 0)
                .equals(new Neo4jMirror.Position(2, 2)));
        assertThat(again).isNull();
        assertThat(p.history())
                .filteredOn(r -> r.topic().equals("dead-letters"))
                .hasSize(1);
    }

    @Test
    void aGraphOnlySinkNeverDecodesVectorsWhileAVectorMirrorDeadLettersOneItCannotRead() throws Exception {
        ObjectNode tree = (ObjectNode) Json.mapper().readTree(Json.toBytes(passage(ns, "p1", "doc", 2, "text", 4)));
        ((ObjectNode) tree.get("object")).put("vector", "not base64!");
        List<byte[]> values = List.of(Json.mapper().writeValueAsBytes(tree));

        MockProducer<String, byte[]> graphOnly = producer();
        Throwable died = runUntil(sink(consumer(values), graphOnly, null), () -> graph.position(group, TOPIC, 0)
                .equals(new Neo4jMirror.Position(1, 1)));
        assertThat(died).isNull();
        assertThat(passagesInGraph()).as("the graph holds the passage").isEqualTo(1);
        assertThat(graphOnly.history())
                .filteredOn(r -> r.topic().equals("dead-letters"))
                .isEmpty();

        // the same record again, into an empty graph, by a sink with a vector mirror
        graph.read("MATCH (n {namespace: $ns}) DETACH DELETE n", Map.of("ns", ns));
        graph.read("MATCH (o:EngramOffset {group: $group}) DELETE o", Map.of("group", group));
        MockProducer<String, byte[]> both = producer();
        Throwable again = runUntil(sink(consumer(values), both, qdrant), () -> graph.position(group, TOPIC, 0)
                .equals(new Neo4jMirror.Position(1, 1)));
        assertThat(again).isNull();
        assertThat(passagesInGraph()).isZero();
        assertThat(both.history())
                .filteredOn(r -> r.topic().equals("dead-letters"))
                .singleElement()
                .satisfies(r -> assertThat(
                                Json.fromBytes(r.value(), DeadLetter.class).cause())
                        .isEqualTo(DeadLetter.Cause.UNDECODABLE));
    }

    @Test
    void kafkaHearsOfTheSinksPositionsAtMostOnceASecondAndWhenItStops() throws Exception {
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
            values.addAll(records(document(ns, "doc" + i, i + 1, "T")));
        }
        List<Long> commits = new ArrayList<>();
        long t0 = System.nanoTime();
        Throwable died = runUntil(
                sink(consumer(values, 0, commits, () -> {}), producer(), null),
                () -> graph.position(group, TOPIC, 0).equals(new Neo4jMirror.Position(250, 250)));
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertThat(died).isNull();
        // three batches of 100: a commit after each would be three in well under a second
        assertThat(commits)
                .as("one commit a second at most, and the last position when the sink stops (in %.1f s)", seconds)
                .hasSizeLessThanOrEqualTo(1 + (int) seconds + 1)
                .endsWith(250L);
    }

    /** A vector mirror passing everything to another. */
    private static class Delegating implements VectorMirror {
        private final VectorMirror to;

        Delegating(VectorMirror to) {
            this.to = to;
        }

        @Override
        public Map<MirrorRecord, String> apply(List<MirrorRecord> records) {
            return to.apply(records);
        }

        @Override
        public void undo(Collection<MirrorRecord> records) {
            to.undo(records);
        }

        @Override
        public List<String> points(MirrorRecord record) {
            return to.points(record);
        }

        @Override
        public Map<VectorKind, Map<String, Long>> versions(String namespace) {
            return to.versions(namespace);
        }

        @Override
        public void close() {}
    }

    @Test
    void historyThatRetentionDeletedBeforeTheSinkReadItIsCountedNeverSkippedSilently() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<byte[]> values = records(document(ns, "doc", 5, "T"), passage(ns, "p1", "doc", 6, "one", 4));
        Throwable died = runUntil(
                sink(consumer(values, 3), producer(), qdrant, new Meters(registry)),
                () -> graph.position(group, TOPIC, 0).equals(new Neo4jMirror.Position(5, 5)));
        assertThat(died).isNull();
        assertThat(registry.get(Meters.MIRROR_HISTORY_GAPS).counter().count()).isEqualTo(1.0);
        assertThat(passagesInGraph()).isEqualTo(1);

        // a sink that resumes inside the history it still has finds no gap
        SimpleMeterRegistry again = new SimpleMeterRegistry();
        MockConsumer<String, byte[]> resumed = consumer(values, 3);
        AtomicBoolean resumedAfterWhatItWrote = new AtomicBoolean();
        runUntil(sink(resumed, producer(), qdrant, new Meters(again)), () -> {
            resumedAfterWhatItWrote.set(resumed.assignment().contains(tp) && resumed.position(tp) == 5);
            return resumedAfterWhatItWrote.get();
        });
        assertThat(resumedAfterWhatItWrote).isTrue();
        assertThat(again.get(Meters.MIRROR_HISTORY_GAPS).counter().count()).isZero();
    }

    /**
     * A batch Qdrant cannot take at its size (a request over its limit) is written in halves; a record too large on its
     * own is rejected like one Qdrant refuses: compensated and undone in the graph. The partition never stalls.
     */
    @Test
    void aVectorBatchTooLargeForQdrantIsWrittenInPartsAndARecordTooLargeAloneIsRejected() throws Exception {
        List<MirrorRecord> records = new ArrayList<>();
        records.add(document(ns, "doc", 1, "T"));
        for (int i = 0; i < 8; i++) {
            records.add(passage(ns, "p" + i, "doc", 2, ("passage " + i + " ").repeat(20_000), 4));
        }
        MirrorRecord huge = passage(ns, "huge", "doc", 2, "x".repeat(MAX_REQUEST_BYTES + 1000), 4);
        records.add(5, huge);
        MockProducer<String, byte[]> p = producer();
        long end = records.size();
        Throwable died = runUntil(
                sink(consumer(records(records.toArray(MirrorRecord[]::new))), p, qdrant),
                () -> graph.position(group, TOPIC, 0).equals(new Neo4jMirror.Position(end, end)));
        assertThat(died).isNull();
        assertThat(graph.position(group, TOPIC, 0)).isEqualTo(new Neo4jMirror.Position(end, end));
        assertThat(p.history().stream()
                        .filter(r -> r.topic().equals("compensations"))
                        .map(r -> Json.fromBytes(r.value(), Compensation.class)))
                .singleElement()
                .satisfies(c -> {
                    assertThat(c.subjectId()).isEqualTo("huge");
                    assertThat(c.sink()).isEqualTo(Compensation.Sink.QDRANT);
                    assertThat(c.outcome()).isEqualTo(Compensation.Outcome.COMPENSATED);
                });
        assertThat(qdrant.versions(ns).get(VectorKind.PASSAGE)).hasSize(8).doesNotContainKey("huge");
        assertThat(passagesInGraph())
                .as("the rejected passage is undone in the graph")
                .isEqualTo(8);
    }

    /**
     * A vector store that stops answering (every write runs into its deadline) is no batch too large: the sink splits
     * the batch, finds that one record times out too, and pauses the partition, rejecting and undoing nothing.
     */
    @Test
    void aVectorStoreThatStallsPausesThePartitionAndRejectsNothing() throws Exception {
        List<byte[]> values = records(
                document(ns, "doc", 1, "T"),
                passage(ns, "p1", "doc", 2, "one", 4),
                passage(ns, "p2", "doc", 2, "two", 4),
                passage(ns, "p3", "doc", 2, "three", 4));
        standIn.holdUpserts = true;
        MockProducer<String, byte[]> p = producer();
        MirrorSink sink = sink(consumer(values), p, qdrant);
        Throwable died;
        try {
            died = runUntil(sink, sink::paused);
        } finally {
            standIn.holdUpserts = false;
        }
        assertThat(died).isNull();
        assertThat(standIn.held.get()).as("the batch, a half, then one record").isGreaterThanOrEqualTo(2);
        assertThat(p.history())
                .filteredOn(r -> r.topic().equals("compensations"))
                .isEmpty();
        assertThat(graph.position(group, TOPIC, 0).vectors())
                .as("the vector position stays")
                .isLessThan(4);
        assertThat(passagesInGraph()).as("nothing undone in the graph").isEqualTo(3);
    }

    /**
     * A batch Neo4j cannot take at its size (over its transaction memory limit) is written in halves; a record too
     * large on its own is rejected like one Neo4j refuses.
     */
    @Test
    void aGraphBatchOverNeo4jsTransactionMemoryIsWrittenInPartsAndARecordOverItAloneIsRejected() throws Exception {
        {
            List<MirrorRecord> records = new ArrayList<>();
            records.add(document(ns, "doc", 1, "T"));
            for (int i = 0; i < 40; i++) {
                records.add(passage(ns, "p" + i, "doc", 2, ("passage " + i + " ").repeat(20_000), 4));
            }
            // a batch of 8 MB of text, and a passage of 16 MB, over the server's transaction memory on its own
            records.add(7, passage(ns, "huge", "doc", 2, "x".repeat((int) Neo4jServer.TRANSACTION_MEMORY_BYTES), 4));
            MockProducer<String, byte[]> p = producer();
            long end = records.size();
            Throwable died = runUntil(
                    sink(consumer(records(records.toArray(MirrorRecord[]::new))), p, null),
                    () -> graph.position(group, TOPIC, 0).graph() == end);
            assertThat(died).isNull();
            assertThat(graph.position(group, TOPIC, 0).graph()).isEqualTo(end);
            assertThat(p.history().stream()
                            .filter(r -> r.topic().equals("compensations"))
                            .map(r -> Json.fromBytes(r.value(), Compensation.class)))
                    .singleElement()
                    .satisfies(c -> {
                        assertThat(c.subjectId()).isEqualTo("huge");
                        assertThat(c.sink()).isEqualTo(Compensation.Sink.NEO4J);
                        assertThat(c.reason()).containsIgnoringCase("memory");
                    });
            assertThat(passagesInGraph()).isEqualTo(40);
        }
    }
}
