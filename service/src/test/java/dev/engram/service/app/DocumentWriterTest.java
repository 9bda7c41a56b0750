package dev.engram.service.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.processors.ReadProcessor;
import dev.engram.schemas.DocumentDecoder;
import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.EventPosition;
import dev.engram.schemas.Json;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.service.http.ApiException;
import dev.engram.service.http.Requests;
import dev.engram.service.http.Routes;
import dev.engram.stores.DocumentRecord;
import dev.engram.understanding.Chunker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * The document writer against Kafka's own mock producer: what reaches the topic, at and past the size limit, when the
 * broker fails, and that a wait never looks at memory before the read step is past the write (no memory here: any
 * look at it would fail).
 */
class DocumentWriterTest {

    private static final String TOPIC = "t.documents";

    private static MockProducer<byte[], byte[]> producer(boolean autoComplete) {
        return new MockProducer<>(autoComplete, null, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static DocumentWriter writer(MockProducer<byte[], byte[]> producer, int maxBytes) {
        return new DocumentWriter(producer, TOPIC, maxBytes, new Chunker(200), null, partition -> -1L);
    }

    private static ObjectNode text(String text) {
        return body("{\"title\": \"T\", \"text\": " + Json.mapper().valueToTree(text) + "}");
    }

    private static ObjectNode body(String json) {
        return Requests.object(json.getBytes(StandardCharsets.UTF_8), "{}");
    }

    @Test
    void aDocumentAtTheLimitIsProducedAndOneBytePastItIsRefusedWithNothingProduced() {
        String text = "x".repeat(1000);
        MockProducer<byte[], byte[]> measure = producer(true);
        writer(measure, 1 << 20).upsert("ns", "d", text(text), null);
        int atLimit = measure.history().get(0).value().length; // the event as produced
        MockProducer<byte[], byte[]> producer = producer(true);
        DocumentWriter w = writer(producer, atLimit);

        DocumentWriter.Written written = w.upsert("ns", "d", text(text), null);
        assertThat(written.offset()).isZero();
        assertThat(written.inMemory()).isNull(); // not asked to wait
        assertThat(producer.history()).hasSize(1);
        assertThat(new String(producer.history().get(0).key(), StandardCharsets.UTF_8))
                .isEqualTo("d");

        assertThatThrownBy(() -> w.upsert("ns", "d", text(text + "x"), null))
                .isInstanceOfSatisfying(
                        ApiException.class, e -> assertThat(e.status()).isEqualTo(413))
                .hasMessageContaining("above the limit of " + atLimit);
        // what the schema refuses is a 400 with its reason, within the size limit too
        DocumentWriter roomy = writer(producer, 1 << 20);
        assertThatThrownBy(() -> roomy.upsert(
                        "ns", "d", body("{\"title\": \"" + "t".repeat(2001) + "\", \"text\": \"x\"}"), null))
                .isInstanceOfSatisfying(
                        ApiException.class, e -> assertThat(e.status()).isEqualTo(400))
                .hasMessageContaining("title");
        assertThat(producer.history()).hasSize(1);
    }

    /**
     * A body becomes the event the read step decodes, byte for byte (fields set to null left out): what the topic would
     * dead-letter (a number for a time, a date that does not exist, a text with nothing visible, metadata that is no
     * object, an unpaired surrogate) is a 400 here, and nothing is produced.
     */
    @Test
    void whatTheReadStepWouldDeadLetterIsA400AndWhatItAcceptsIsProducedAsChecked() {
        MockProducer<byte[], byte[]> producer = producer(true);
        DocumentWriter w = writer(producer, 1 << 20);
        for (String bad : new String[] {
            "{\"text\": \"x\", \"event_time\": 12345}",
            "{\"text\": \"x\", \"event_time\": \"2024-02-30T00:00:00Z\"}",
            "{\"text\": \"\\u200b\\u00a0\"}",
            "{\"text\": \"x\", \"metadata\": [1]}",
            "{\"text\": \"x\\ud800\"}"
        }) {
            assertThatThrownBy(() -> w.upsert("ns", "d", body(bad), null))
                    .as(bad)
                    .isInstanceOfSatisfying(
                            ApiException.class, e -> assertThat(e.status()).isEqualTo(400));
        }
        assertThat(producer.history()).isEmpty();

        w.upsert(
                "ns",
                "d",
                body("{\"text\": \"Ada\", \"title\": null, \"metadata\": null,"
                        + " \"event_time\": \"2024-05-01T12:00:00+02:00\"}"),
                null);
        byte[] produced = producer.history().get(0).value();
        assertThat(new String(produced, StandardCharsets.UTF_8))
                .as("a field set to null is left out")
                .doesNotContain("title")
                .doesNotContain("metadata");
        DocumentDecoder.Result decoded =
                new DocumentDecoder(1 << 20).decode("d".getBytes(StandardCharsets.UTF_8), produced);
        assertThat(decoded).isInstanceOfSatisfying(DocumentDecoder.Accepted.class, a -> {
            assertThat(a.event().namespace()).isEqualTo("ns");
            assertThat(a.event().op()).isEqualTo(DocumentEvent.Op.UPSERT);
            assertThat(a.event().eventTime()).isEqualTo(Instant.parse("2024-05-01T10:00:00Z"));
        });
    }

    @Test
    void aBrokerThatFailsTheWriteIsA503() {
        MockProducer<byte[], byte[]> producer = producer(false);
        DocumentWriter w = writer(producer, 1 << 20);
        Thread broker = new Thread(() -> {
            while (!producer.errorNext(new TimeoutException("broker gone"))) {
                Thread.onSpinWait();
            }
        });
        broker.start();

        assertThatThrownBy(() -> w.delete("ns", "d", null))
                .isInstanceOfSatisfying(
                        ApiException.class, e -> assertThat(e.status()).isEqualTo(503))
                .hasMessageContaining("broker gone");
    }

    @Test
    void aWaitDoesNotLookAtMemoryBeforeTheReadStepIsPastTheWrite() {
        DocumentWriter w = writer(producer(true), 1 << 20);

        DocumentWriter.Written written = w.upsert("ns", "d", text("Ada wrote Note G."), Duration.ofMillis(300));

        assertThat(written.inMemory()).isFalse(); // 202: accepted, not (yet) known to be in memory
        assertThat(written.status()).isNull();
        assertThat(written.waitedMs()).isGreaterThanOrEqualTo(300);
    }

    /**
     * A wait ends as soon as memory holds a version of other content read from a later event of the same partition
     * (another writer's write of the document): this one will not be in memory as written. Memory is a stand-in here, and the read step
     * is taken as past every write.
     */
    @Test
    void aWaitEndsWhenMemoryHoldsALaterWriteOfTheDocument() {
        MockProducer<byte[], byte[]> producer = producer(true);
        AtomicReference<DocumentRecord> memory = new AtomicReference<>();
        DocumentWriter w = new DocumentWriter(
                producer,
                TOPIC,
                1 << 20,
                new Chunker(200),
                (ns, id) -> Optional.ofNullable(memory.get()),
                partition -> Long.MAX_VALUE);
        DocumentWriter.Written first = w.upsert("ns", "d", text("Ada wrote Note G."), null);
        int partition = first.partition();

        // memory holds the version of the write before: this one is still to come, so the wait goes on to its end
        memory.set(record("Ada wrote Note G.", 1, new EventPosition(TOPIC, partition, first.offset())));
        DocumentWriter.Written waited = w.upsert("ns", "d", text("Ada described loops."), Duration.ofMillis(300));
        assertThat(waited.inMemory()).isFalse();
        assertThat(waited.superseded()).isNull();
        assertThat(waited.waitedMs()).isGreaterThanOrEqualTo(300);

        // a version read from an event of another partition (the topic was given more) is not known to be later
        memory.set(record("Babbage's engine.", 3, new EventPosition(TOPIC, partition + 1, 1_000)));
        assertThat(w.upsert("ns", "d", text("Ada described loops."), Duration.ofMillis(300))
                        .superseded())
                .isNull();

        // memory holds the version of a later write (another writer's): the wait ends with it, whatever its timeout
        memory.set(record("Babbage's engine.", 4, new EventPosition(TOPIC, partition, 1_000)));
        DocumentWriter.Written replaced = w.upsert("ns", "d", text("Ada described loops."), Duration.ofMinutes(5));
        assertThat(replaced.inMemory()).isFalse();
        assertThat(replaced.superseded()).isTrue();
        assertThat(replaced.version()).isEqualTo(4); // the later write's
        assertThat(replaced.status()).isEqualTo(DocumentStatus.VERIFIED);
        assertThat(Json.mapper().valueToTree(replaced).path("superseded").asBoolean())
                .isTrue();

        // a delete is replaced the same way
        assertThat(w.delete("ns", "d", Duration.ofMinutes(5)).superseded()).isTrue();

        // a later write of the same content (another client sent it again) is not another write: while it is being
        // understood the wait goes on
        memory.set(
                record("Ada described loops.", 5, new EventPosition(TOPIC, partition, 1_000), DocumentStatus.READING));
        DocumentWriter.Written same = w.upsert("ns", "d", text("Ada described loops."), Duration.ofMillis(300));
        assertThat(same.inMemory()).isFalse();
        assertThat(same.superseded()).isNull();

        // and once it is understood, this write is in memory
        memory.set(record("Ada described loops.", 5, new EventPosition(TOPIC, partition, 1_000)));
        DocumentWriter.Written held = w.upsert("ns", "d", text("Ada described loops."), Duration.ofMinutes(5));
        assertThat(held.inMemory()).isTrue();
        assertThat(held.superseded()).isNull();
        assertThat(Json.mapper().valueToTree(held).has("superseded")).isFalse();
    }

    /** Memory's record of document "d" of namespace "ns", verified with the passages the read step cuts {@code text} into. */
    private static DocumentRecord record(String text, long version, EventPosition input) {
        return record(text, version, input, DocumentStatus.VERIFIED);
    }

    private static DocumentRecord record(String text, long version, EventPosition input, DocumentStatus status) {
        DocumentEvent event = DocumentEvent.upsert("ns", "d", "T", text);
        List<PassageRef> passages = ReadProcessor.passages(new Chunker(200), event).stream()
                .map(ReadProcessor.Planned::ref)
                .toList();
        return new DocumentRecord(
                "ns",
                "d",
                version,
                status,
                "T",
                null,
                Map.of(),
                null,
                passages,
                passages.size(),
                Instant.now(),
                input,
                List.of());
    }

    @Test
    void anIdIsOnePathSegmentWhateverItHolds() {
        assertThat(DocumentWriter.segment("notes/ada.md")).isEqualTo("notes%2Fada.md");
        assertThat(DocumentWriter.segment("a b?c#d%e")).isEqualTo("a%20b%3Fc%23d%25e");
        assertThat(DocumentWriter.segment("Ünïcode")).isEqualTo("%C3%9Cn%C3%AFcode");
        // a client or proxy that normalizes paths would resolve these against the parent
        assertThat(DocumentWriter.segment("..")).isEqualTo("%2E%2E");
        assertThat(DocumentWriter.segment(".")).isEqualTo("%2E");
        assertThat(DocumentWriter.segment("...")).isEqualTo("...");
    }

    @Test
    void documentIdsFollowTheEventSchema() {
        assertThat(Routes.validId("x".repeat(512))).isTrue();
        assertThat(Routes.validId("x".repeat(513))).isFalse();
        assertThat(Routes.validId("😀".repeat(512))).isTrue(); // 512 characters, 1,024 UTF-16 units
        // ids written before the rules of new ids are still read and deleted; a new one meets them
        assertThat(Routes.validId("a\u0085b")).isTrue();
        assertThat(Routes.validId("\u200b")).isTrue();
        assertThat(DocumentDecoder.newId("a\u0085b")).isFalse(); // C1 controls are control characters too
        assertThat(DocumentDecoder.newId("a\u009fb")).isFalse();
        assertThat(DocumentDecoder.newId("a\u00a0b")).isTrue(); // the first character after them
        assertThat(DocumentDecoder.newId("\u200b")).isFalse(); // nothing visible
        // a URL path's own segments: no client can send them, no server reads them encoded
        assertThat(DocumentDecoder.newId(".")).isFalse();
        assertThat(DocumentDecoder.newId("..")).isFalse();
        assertThat(DocumentDecoder.newId("...")).isTrue();
        assertThat(DocumentDecoder.newId(".env")).isTrue();
        assertThat(DocumentDecoder.newId("\u200bx")).isTrue();
        assertThat(Routes.validId("a\u0000b")).isFalse();
        assertThat(Routes.validId("a\u007fb")).isFalse();
        assertThat(Routes.validId("")).isFalse();
    }
}
