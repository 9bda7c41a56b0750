package dev.engram.service.app;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.processors.ReadProcessor;
import dev.engram.query.QueryException;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.DocumentDecoder;
import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.Json;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.service.http.ApiException;
import dev.engram.service.http.Requests;
import dev.engram.stores.DocumentRecord;
import dev.engram.understanding.Chunker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Documents over HTTP: a {@code PUT} or {@code DELETE} becomes the same document event a producer would send to the
 * documents topic — the stream stays the source of truth — after the stream's own validation and limits
 * ({@link DocumentDecoder}), so a body the stream would dead-letter is a 4xx and is never produced. The caller may wait
 * until memory holds exactly its version: for an upsert, the document {@code VERIFIED} with the passages the read step
 * cuts this event into (ids and content hashes) and the same title, source, metadata and event time; for a delete, the
 * document gone or {@code ARCHIVED}. A wait ends early when memory holds a version of other content read from a later
 * event of the same document on the same partition (another writer's): this one is then not in memory as written
 * (unless it is sent again), and the answer says it was {@code superseded}.
 */
public final class DocumentWriter {

    /** How long a request may wait at most, and between two looks at memory. */
    public static final Duration MAX_WAIT = Duration.ofMinutes(5);

    private static final long POLL_MILLIS = 100;

    private final Producer<byte[], byte[]> producer;
    private final String topic;
    private final DocumentDecoder decoder;
    private final Chunker chunker;
    /** Memory's record of a document by namespace and id (it throws a {@link QueryException} while moving). */
    private final BiFunction<String, String, Optional<DocumentRecord>> documents;

    private final ToLongFunction<TopicPartition> readUpTo;

    /**
     * @param readUpTo the next offset the read step will take from a partition of the documents topic (what it has
     *     committed), or −1 when unknown: a wait starts to look at memory only once the read step is past the write
     */
    DocumentWriter(
            Producer<byte[], byte[]> producer,
            String topic,
            int maxDocumentBytes,
            Chunker chunker,
            BiFunction<String, String, Optional<DocumentRecord>> documents,
            ToLongFunction<TopicPartition> readUpTo) {
        this.readUpTo = readUpTo;
        this.producer = producer;
        this.topic = topic;
        this.decoder = new DocumentDecoder(maxDocumentBytes);
        this.chunker = chunker;
        this.documents = documents;
    }

    /** What a write answers: where the event went, and, when the caller waited, whether memory holds it. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Written(
            String namespace,
            String id,
            DocumentEvent.Op op,
            String topic,
            int partition,
            long offset,
            String statusUrl,
            Boolean inMemory,
            Boolean superseded,
            DocumentStatus status,
            Long version,
            Long waitedMs) {}

    /**
     * Writes the document {@code body} (a JSON object of the fields of {@link Requests.Document}) as an upsert event:
     * the event is the body's own fields (those set to null left out) with the namespace, id and operation added,
     * checked by the read step's own decoder and produced as checked, byte for byte.
     */
    public Written upsert(String ns, String id, ObjectNode body, Duration wait) {
        ObjectNode event = Json.mapper().createObjectNode();
        event.put("namespace", ns);
        event.put("id", id);
        event.put("op", "upsert");
        body.properties().forEach(field -> {
            if (!field.getValue().isNull()) { // a field set to null is left out, as clients send an absent value
                event.set(field.getKey(), field.getValue());
            }
        });
        Checked accepted = validate(id, Json.toBytes(event));
        List<PassageRef> expected = ReadProcessor.passages(chunker, accepted.event()).stream()
                .map(ReadProcessor.Planned::ref)
                .toList();
        return write(
                accepted,
                wait,
                d -> d.isPresent() && holds(d.get(), accepted.event(), expected),
                d -> d.isPresent() && sameContent(d.get(), accepted.event(), expected));
    }

    public Written delete(String ns, String id, Duration wait) {
        Checked accepted = validate(id, Json.toBytes(DocumentEvent.delete(ns, id)));
        Done gone = d -> d.isEmpty() || d.get().status() == DocumentStatus.ARCHIVED;
        return write(accepted, wait, gone, gone);
    }

    /** An event the read step accepts, and the bytes it accepted it from. */
    private record Checked(DocumentEvent event, byte[] value) {}

    /** The event as the read step will decode it, or the 4xx that says why the stream would refuse it. */
    private Checked validate(String id, byte[] value) {
        DocumentDecoder.Result decoded = decoder.decode(id.getBytes(StandardCharsets.UTF_8), value);
        if (decoded instanceof DocumentDecoder.Rejected r) {
            throw r.cause() == DeadLetter.Cause.TOO_LARGE
                    ? ApiException.tooLarge(r.reason())
                    : ApiException.badRequest(r.reason());
        }
        return new Checked(((DocumentDecoder.Accepted) decoded).event(), value);
    }

    private interface Done {
        boolean test(Optional<DocumentRecord> document);
    }

    /**
     * @param done whether memory holds this write
     * @param same whether memory's version, understood or not yet, is of this write's content: a later write of the
     *     same content (another client sending it again) is this one's too, and does not supersede it
     */
    private Written write(Checked checked, Duration wait, Done done, Done same) {
        DocumentEvent event = checked.event();
        RecordMetadata sent;
        try {
            sent = producer.send(
                            new ProducerRecord<>(topic, event.id().getBytes(StandardCharsets.UTF_8), checked.value()))
                    .get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("interrupted while writing the document event");
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw ApiException.unavailable("the document event could not be written to '" + topic + "': " + cause);
        }
        String statusUrl = "/v1/namespaces/" + segment(event.namespace()) + "/documents/" + segment(event.id());
        Optional<DocumentRecord> now = Optional.empty();
        Boolean in = null;
        boolean superseded = false;
        long t0 = System.nanoTime();
        if (wait != null) {
            long deadline = t0 + wait.toNanos();
            TopicPartition partition = new TopicPartition(sent.topic(), sent.partition());
            in = false;
            boolean read = false;
            while (true) {
                // memory is looked at only once the read step is past this write: before, it may hold the same
                // content from an earlier write while another one is still to be read
                read = read || readUpTo.applyAsLong(partition) > sent.offset();
                if (read) {
                    try {
                        now = documents.apply(event.namespace(), event.id());
                        in = done.test(now);
                        // memory holds a version of other content, read from a later event of the document: this
                        // write is not in memory as written, and will not be unless it is sent again
                        superseded = !in
                                && now.map(DocumentRecord::input)
                                        .filter(at -> at.after(sent.topic(), sent.partition(), sent.offset()))
                                        .isPresent()
                                && !same.test(now);
                    } catch (QueryException e) {
                        // the namespace's partition is moving: look again until the deadline
                    }
                }
                if (in || superseded || System.nanoTime() >= deadline) {
                    break;
                }
                try {
                    Thread.sleep(POLL_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return new Written(
                event.namespace(),
                event.id(),
                event.op(),
                topic,
                sent.partition(),
                sent.offset(),
                statusUrl,
                in,
                superseded ? Boolean.TRUE : null, // said only when it is so
                now.map(DocumentRecord::status).orElse(null),
                now.map(DocumentRecord::version).orElse(null),
                wait == null ? null : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    }

    /** Whether memory holds exactly this version of the document, understood and verified. */
    static boolean holds(DocumentRecord d, DocumentEvent event, List<PassageRef> expected) {
        return d.status() == DocumentStatus.VERIFIED && sameContent(d, event, expected);
    }

    /** Whether memory's version of the document is of this content, understood or not yet. */
    private static boolean sameContent(DocumentRecord d, DocumentEvent event, List<PassageRef> expected) {
        return d.status() != DocumentStatus.ARCHIVED
                && d.passages().equals(expected)
                && d.title().equals(event.title())
                && Objects.equals(d.source(), event.source())
                && Objects.equals(d.eventTime(), event.eventTime())
                && Json.mapper().valueToTree(d.metadata()).equals(Json.mapper().valueToTree(event.metadata()));
    }

    /** A path segment, percent-encoded but for RFC 3986's unreserved characters; "." and ".." are encoded too. */
    public static String segment(String s) {
        if (s.equals(".") || s.equals("..")) {
            return s.replace(".", "%2E");
        }
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
                out.append(c);
            } else {
                out.append('%').append(String.format(Locale.ROOT, "%02X", b & 0xff));
            }
        }
        return out.toString();
    }
}
