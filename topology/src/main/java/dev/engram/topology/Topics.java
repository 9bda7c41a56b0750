package dev.engram.topology;

import dev.engram.schemas.Compensation;
import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.JsonSerde;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;
import java.util.List;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/** Every topic of Engram, named with the configured prefix, with its serdes. */
public record Topics(String prefix) {

    private static final Serde<String> STRING = Serdes.String();
    private static final Serde<byte[]> BYTES = Serdes.ByteArray();
    private static final Serde<PassageEvent> PASSAGE = JsonSerde.of(PassageEvent.class);
    private static final Serde<UnderstandingEvent> UNDERSTANDING = JsonSerde.of(UnderstandingEvent.class);
    private static final Serde<Extraction> EXTRACTION = JsonSerde.of(Extraction.class);
    private static final Serde<MemoryChange> MEMORY_CHANGE = JsonSerde.of(MemoryChange.class);
    private static final Serde<MemoryCommand> MEMORY_COMMAND = JsonSerde.of(MemoryCommand.class);
    private static final Serde<MirrorRecord> MIRROR = JsonSerde.of(MirrorRecord.class);
    private static final Serde<Compensation> COMPENSATION = JsonSerde.of(Compensation.class);
    private static final Serde<DeadLetter> DEAD_LETTER = JsonSerde.of(DeadLetter.class);

    /**
     * Input: document events (key: document id; value: document-event.schema.json). Read as raw bytes: the read step
     * validates them and dead-letters what is not a document event.
     */
    public Topic<byte[], byte[]> documents() {
        return new Topic<>(prefix + "documents", BYTES, BYTES);
    }

    /** Passages read from documents (key: passage id; value: passage.schema.json). */
    public Topic<String, PassageEvent> passages() {
        return new Topic<>(prefix + "passages", STRING, PASSAGE);
    }

    /** Understood passages, retractions and manifests (key: namespace; value: understanding.schema.json). */
    public Topic<String, UnderstandingEvent> understandings() {
        return new Topic<>(prefix + "understandings", STRING, UNDERSTANDING);
    }

    /** Extraction cache, compacted (key: "content hash|extractor id"; value: extraction.schema.json). */
    public Topic<String, Extraction> extractions() {
        return new Topic<>(prefix + "extractions", STRING, EXTRACTION);
    }

    /** Versioned mutations of each namespace's memory (key: namespace; value: memory-change.schema.json). */
    public Topic<String, MemoryChange> memoryChanges() {
        return new Topic<>(prefix + "memory-changes", STRING, MEMORY_CHANGE);
    }

    /**
     * Memory objects' states for the Neo4j and Qdrant mirrors (key: namespace; value: mirror.schema.json), written by
     * the memory step in the order memory changed.
     */
    public Topic<String, MirrorRecord> mirror() {
        return new Topic<>(prefix + "mirror", STRING, MIRROR);
    }

    /** Operators' entity-resolution commands (key: namespace; value: memory-command.schema.json). */
    public Topic<String, MemoryCommand> memoryCommands() {
        return new Topic<>(prefix + "memory-commands", STRING, MEMORY_COMMAND);
    }

    /**
     * The mirrors' reports to the memory step: objects compensated, repaired, or found drifting (key: namespace; value:
     * compensation.schema.json).
     */
    public Topic<String, Compensation> compensations() {
        return new Topic<>(prefix + "compensations", STRING, COMPENSATION);
    }

    /** Rejected inputs with their reason (key: the original key; value: dead-letter.schema.json). */
    public Topic<byte[], DeadLetter> deadLetters() {
        return new Topic<>(prefix + "dead-letters", BYTES, DEAD_LETTER);
    }

    public List<Topic<?, ?>> all() {
        return List.of(
                documents(),
                passages(),
                understandings(),
                extractions(),
                memoryChanges(),
                mirror(),
                memoryCommands(),
                compensations(),
                deadLetters());
    }
}
