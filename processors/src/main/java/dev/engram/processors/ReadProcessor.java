package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.schemas.Conversation;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.DocumentDecoder;
import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.EventPosition;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.schemas.Utf8;
import dev.engram.stores.DocumentState;
import dev.engram.stores.Hashing;
import dev.engram.stores.Keys;
import dev.engram.stores.StateStores;
import dev.engram.understanding.Chunker;
import dev.engram.understanding.FrontMatter;
import dev.engram.understanding.HtmlText;
import dev.engram.understanding.Understander;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;

/**
 * READ: validates a document event, chunks the document, diffs it against the passages of its previous version and
 * emits only what changed: new passages, retractions of vanished ones, and the manifest of the new version. A delete
 * retracts every passage. Invalid input becomes a dead letter with its reason.
 */
public final class ReadProcessor implements Processor<byte[], byte[], Void, Emission> {

    private final DocumentDecoder decoder;
    private final Chunker chunker;
    private final Meters meters;
    private ProcessorContext<Void, Emission> context;
    private KeyValueStore<String, DocumentState> documents;
    private DeadLetters letters;
    private Tally tally;

    public ReadProcessor(DocumentDecoder decoder, Chunker chunker, Meters meters) {
        this.decoder = decoder;
        this.chunker = chunker;
        this.meters = meters;
    }

    /** The read step with the store it owns. */
    public static ProcessorSupplier<byte[], byte[], Void, Emission> supplier(
            DocumentDecoder decoder, Chunker chunker, Meters meters) {
        return new ProcessorSupplier<>() {
            @Override
            public Processor<byte[], byte[], Void, Emission> get() {
                return new ReadProcessor(decoder, chunker, meters);
            }

            @Override
            public Set<StoreBuilder<?>> stores() {
                return Set.of(StateStores.READ_DOCUMENTS.builder(), StateStores.READ_TALLY.builder());
            }
        };
    }

    @Override
    public void init(ProcessorContext<Void, Emission> context) {
        this.context = context;
        this.documents = context.getStateStore(StateStores.READ_DOCUMENTS.name());
        this.tally = new Tally(context, StateStores.READ_TALLY, meters);
        this.letters = new DeadLetters(
                context,
                DeadLetter.Stage.READ,
                tally,
                e -> new DeadLetters.Failure(DeadLetter.Cause.ERROR, "read failed: " + e));
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        Meters.DocumentOutcome outcome =
                switch (decoder.decode(record.key(), record.value())) {
                    case DocumentDecoder.Rejected rejected -> {
                        letters.reject(record, rejected.cause(), rejected.reason(), record.key(), record.value());
                        yield Meters.DocumentOutcome.DEAD_LETTERED;
                    }
                    // A valid event the step cannot handle must not stop the stream: it is dead-lettered.
                    case DocumentDecoder.Accepted accepted ->
                        letters.call(record, record.key(), record::value, () -> read(record, accepted.event()))
                                .orElse(Meters.DocumentOutcome.DEAD_LETTERED);
                };
        tally.add(Meters.documentsKey(outcome)); // one outcome per record, in the record's transaction
    }

    @Override
    public void close() {
        if (tally != null) {
            tally.close();
        }
    }

    private Meters.DocumentOutcome read(Record<byte[], byte[]> record, DocumentEvent event) {
        String key = Keys.of(event.namespace(), event.id());
        DocumentState previous = documents.get(key);
        List<PassageRef> before = previous == null || previous.deleted() ? List.of() : previous.passages();
        long version = previous == null ? 1 : previous.version() + 1;
        if (event.op() == DocumentEvent.Op.UPSERT
                && previous != null
                && !previous.deleted()
                && eventHash(event).equals(previous.eventHash())) {
            // The very event the current version was read from, sent again: nothing to do, no new version.
            return Meters.DocumentOutcome.UNCHANGED;
        }
        return switch (event.op()) {
            case UPSERT -> upsert(record, event, key, before, version);
            case DELETE -> delete(record, event, key, previous, before, version);
        };
    }

    private Meters.DocumentOutcome upsert(
            Record<byte[], byte[]> record, DocumentEvent event, String key, List<PassageRef> before, long version) {
        List<Planned> planned = passages(chunker, event);
        List<PassageRef> after = new ArrayList<>(planned.size());
        List<PassageEvent.Upsert> upserts = new ArrayList<>();
        Set<String> previousIds = new LinkedHashSet<>();
        before.forEach(p -> previousIds.add(p.passageId()));
        for (int i = 0; i < planned.size(); i++) {
            Chunker.Chunk c = planned.get(i).chunk();
            PassageRef ref = planned.get(i).ref();
            after.add(ref);
            if (!previousIds.remove(ref.passageId())) {
                upserts.add(passage(event, planned.get(i).title(), version, i, ref.passageId(), ref.contentHash(), c));
            }
        }
        for (String gone : previousIds) {
            forward(
                    record,
                    new Emission.Passage(new PassageEvent.Retraction(
                            event.namespace(), event.id(), version, gone, PassageEvent.Reason.UPDATED)));
        }
        upserts.forEach(u -> forward(record, new Emission.Passage(u)));
        forward(record, new Emission.Understood(manifest(event, version, after, input(), notes(event, after))));
        documents.put(key, new DocumentState(event.namespace(), event.id(), version, false, after, eventHash(event)));
        meters.passages(Meters.PassageOp.UPSERT, upserts.size());
        meters.passages(Meters.PassageOp.RETRACT, previousIds.size());
        return Meters.DocumentOutcome.UPSERTED;
    }

    private static PassageEvent.Upsert passage(
            DocumentEvent event,
            String title,
            long version,
            int ordinal,
            String passageId,
            String hash,
            Chunker.Chunk c) {
        return new PassageEvent.Upsert(
                event.namespace(),
                event.id(),
                version,
                passageId,
                ordinal,
                hash,
                title,
                c.headings(),
                c.text(),
                c.start(),
                c.end(),
                event.source(),
                event.eventTime(),
                Conversation.of(event.metadata()));
    }

    /** One passage of a document version as the read step cuts it: its chunk, id, content hash and title. */
    public record Planned(Chunker.Chunk chunk, PassageRef ref, String title) {}

    /**
     * The passages an upsert becomes, in order: deterministic in the event and the chunker, so whoever wrote the event
     * can tell when memory holds exactly this version (its manifest lists the same ids and hashes).
     */
    public static List<Planned> passages(Chunker chunker, DocumentEvent event) {
        Readable read = Readable.of(event);
        List<Chunker.Chunk> chunks = chunker.chunk(read.text());
        List<Planned> out = new ArrayList<>(chunks.size());
        Map<String, Integer> occurrences = new HashMap<>();
        for (int i = 0; i < chunks.size(); i++) {
            Chunker.Chunk c = chunks.get(i);
            String hash = Hashing.sha256Hex(understood(passage(event, read.title(), 0, i, "", "", c)));
            int occurrence = occurrences.merge(hash, 1, Integer::sum);
            out.add(new Planned(
                    c,
                    new PassageRef(Hashing.id(event.namespace(), event.id(), hash, Integer.toString(occurrence)), hash),
                    read.title()));
        }
        return out;
    }

    /**
     * What a document's passages are cut from and titled by: an HTML page ({@link HtmlText#is}) as its text, titled by
     * its {@code <title>} when the event has none; other text as it is, titled by its YAML front matter's title when
     * the event has none (the chunker does not read front matter as text). Passage offsets are into this text.
     */
    record Readable(String title, String text) {
        /** The longest title a document event can carry (its schema's limit), and so a document's. */
        static final int MAX_TITLE = 2000;

        static Readable of(DocumentEvent event) {
            if (event.text() == null) {
                return new Readable(event.title(), "");
            }
            if (HtmlText.is(event)) {
                HtmlText page = HtmlText.of(event.text());
                return new Readable(event.title().isBlank() ? cut(page.title()) : event.title(), page.text());
            }
            if (!event.title().isBlank() || !event.text().startsWith("---")) {
                return new Readable(event.title(), event.text());
            }
            String t = FrontMatter.of(event.text()).title();
            return new Readable(t == null ? event.title() : cut(t), event.text());
        }

        /**
         * A title read from the text, cut to {@link #MAX_TITLE} characters (never inside a character's surrogate
         * pair): every passage carries its document's title.
         */
        static String cut(String title) {
            String cut = Utf8.abbreviate(title, MAX_TITLE, "");
            return cut.length() == title.length() ? title : cut.strip();
        }
    }

    /**
     * How an upsert was read where it was not as it asked: none of these refuses a document, which is read as plain
     * text, but its status says why (the manifest's {@code notes}). Metadata of a conversation without its speaker; a
     * turn without the time that "yesterday" is relative to; front matter that is not YAML; a text with nothing to read.
     */
    static List<String> notes(DocumentEvent event, List<PassageRef> passages) {
        List<String> notes = new ArrayList<>();
        Map<String, Object> metadata = event.metadata() == null ? Map.of() : event.metadata();
        Conversation turn = Conversation.of(metadata);
        if (turn == null && (metadata.containsKey("participants") || metadata.containsKey("session"))) {
            notes.add("metadata names participants or a session but no speaker: read as a document, not as a turn of a"
                    + " conversation");
        }
        if (turn != null && event.eventTime() == null) {
            notes.add("a turn without event_time: times relative to it (\"yesterday\", \"last week\") are left as"
                    + " written");
        }
        String text = event.text() == null ? "" : event.text();
        if (text.startsWith("---") && !HtmlText.is(event)) {
            String problem = FrontMatter.problem(text);
            if (problem != null) {
                notes.add("front matter is " + problem + ": read as text");
            }
        }
        if (passages.isEmpty() && !text.isBlank()) {
            notes.add("nothing to read: the text has no prose once markup, scripts and front matter are set aside");
        }
        return notes;
    }

    /**
     * What a passage's understanding depends on, hashed into its content hash so that a passage is understood again
     * exactly when it changes: its embedded text; for a conversation's turn also who says it to whom, in which
     * session, and on which day ("yesterday" means that day's eve). A document's passages keep their ids when only its
     * event time changes.
     */
    private static String understood(PassageEvent.Upsert p) {
        String text = Understander.embeddingText(p);
        Conversation c = p.conversation();
        if (c != null) {
            text += "\u0000" + c.speaker() + "\u0000" + String.join("\u0001", c.participants()) + "\u0000"
                    + c.session();
            // a turn is dated by when it was said: its day places it in its session and in time
            if (p.eventTime() != null) {
                text += "\u0000" + p.eventTime().atZone(ZoneOffset.UTC).toLocalDate();
            }
        }
        return text;
    }

    private Meters.DocumentOutcome delete(
            Record<byte[], byte[]> record,
            DocumentEvent event,
            String key,
            DocumentState previous,
            List<PassageRef> before,
            long version) {
        if (previous == null || previous.deleted()) {
            return Meters.DocumentOutcome.UNKNOWN_DELETE;
        }
        for (PassageRef p : before) {
            forward(
                    record,
                    new Emission.Passage(new PassageEvent.Retraction(
                            event.namespace(), event.id(), version, p.passageId(), PassageEvent.Reason.DELETED)));
        }
        forward(record, new Emission.Understood(manifest(event, version, List.of(), input(), List.of())));
        documents.put(key, new DocumentState(event.namespace(), event.id(), version, true, List.of(), null));
        meters.passages(Meters.PassageOp.RETRACT, before.size());
        return Meters.DocumentOutcome.DELETED;
    }

    /**
     * The SHA-256 of the event as decoded, its fields in their fixed order and the metadata's keys in key order at every
     * depth: the same event gives the same hash in any JVM, whatever order its metadata's keys were sent in.
     */
    static String eventHash(DocumentEvent event) {
        return Hashing.sha256Hex(new String(Json.canonicalBytes(event), StandardCharsets.UTF_8));
    }

    /** Where the record being read sits on its topic (null when the context does not know, as in some tests). */
    private EventPosition input() {
        return context.recordMetadata()
                .map(m -> new EventPosition(m.topic(), m.partition(), m.offset()))
                .orElse(null);
    }

    private static UnderstandingEvent.Manifest manifest(
            DocumentEvent event, long version, List<PassageRef> passages, EventPosition input, List<String> notes) {
        return new UnderstandingEvent.Manifest(
                event.namespace(),
                event.id(),
                version,
                event.op(),
                event.title(),
                event.source(),
                event.metadata(),
                event.eventTime(),
                passages,
                input,
                notes);
    }

    private void forward(Record<byte[], byte[]> record, Emission emission) {
        context.forward(new Record<Void, Emission>(null, emission, record.timestamp(), record.headers()));
    }
}
