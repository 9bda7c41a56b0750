package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Input of the memory step, keyed by namespace. */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({
    @JsonSubTypes.Type(value = UnderstandingEvent.Understood.class, name = "understood"),
    @JsonSubTypes.Type(value = UnderstandingEvent.Retracted.class, name = "retracted"),
    @JsonSubTypes.Type(value = UnderstandingEvent.Manifest.class, name = "manifest"),
    @JsonSubTypes.Type(value = UnderstandingEvent.Command.class, name = "command"),
    @JsonSubTypes.Type(value = UnderstandingEvent.MirrorFeedback.class, name = "mirror_feedback")
})
public sealed interface UnderstandingEvent {

    String namespace();

    String documentId();

    /** A passage and what was understood of it. */
    record Understood(PassageEvent.Upsert passage, Understanding understanding) implements UnderstandingEvent {
        @Override
        public String namespace() {
            return passage.namespace();
        }

        @Override
        public String documentId() {
            return passage.documentId();
        }
    }

    /** A passage withdrawn from its document. */
    record Retracted(PassageEvent.Retraction retraction) implements UnderstandingEvent {
        @Override
        public String namespace() {
            return retraction.namespace();
        }

        @Override
        public String documentId() {
            return retraction.documentId();
        }
    }

    /**
     * The full passage list of a document version; a delete has none. {@code input} is where the document event it was
     * read from sits on the documents topic (null in manifests written before positions were recorded). {@code notes}
     * say how the document was read where it was not as it asked: metadata of a conversation without a speaker, front
     * matter that is not YAML, a turn without a time to resolve "yesterday" by (empty when none).
     */
    record Manifest(
            String namespace,
            String documentId,
            long documentVersion,
            DocumentEvent.Op op,
            String title,
            String source,
            Map<String, Object> metadata,
            Instant eventTime,
            List<PassageRef> passages,
            EventPosition input,
            List<String> notes)
            implements UnderstandingEvent {
        public Manifest {
            passages = passages == null ? List.of() : List.copyOf(passages);
            notes = notes == null ? List.of() : List.copyOf(notes);
        }
    }

    record PassageRef(String passageId, String contentHash) {}

    /**
     * An operator's command from the memory-commands topic, or why its record could not be read ({@code error},
     * with the {@code raw} bytes, for the dead-letter topic). Never written to the understandings topic.
     */
    record Command(MemoryCommand command, String error, byte[] raw) implements UnderstandingEvent {

        /** Reads and validates a command record against its schema. */
        public static Command decode(byte[] bytes) {
            if (bytes == null) {
                return new Command(null, "null value", null);
            }
            try {
                JsonNode tree = Json.mapper().readTree(bytes);
                if (tree == null) {
                    return new Command(null, "empty value", bytes);
                }
                List<String> errors = Schemas.MEMORY_COMMAND.validate(tree);
                if (!errors.isEmpty()) {
                    return new Command(null, "schema: " + errors.get(0), bytes);
                }
                MemoryCommand command = Json.mapper().treeToValue(tree, MemoryCommand.class);
                if (command.entityId().equals(command.otherId())) {
                    return new Command(null, "entity_id and other_id must differ", bytes);
                }
                return new Command(command, null, bytes);
            } catch (IOException e) {
                return new Command(null, "malformed JSON: " + Json.problem(e), bytes);
            }
        }

        @Override
        public String namespace() {
            return command == null ? null : command.namespace();
        }

        @Override
        public String documentId() {
            return null;
        }
    }

    /**
     * What a mirror reported about an object (a compensation, a repair, a drift) from the compensations topic, or why
     * its record could not be read ({@code error}, with the {@code raw} bytes). Never written to the understandings
     * topic.
     */
    record MirrorFeedback(Compensation compensation, String error, byte[] raw) implements UnderstandingEvent {

        /** Reads a compensation record, bound strictly (see {@link Json#bindInternal}). */
        public static MirrorFeedback decode(byte[] bytes) {
            if (bytes == null) {
                return new MirrorFeedback(null, "null value", null);
            }
            try {
                JsonNode tree = Json.strictTrees().readTree(bytes);
                if (tree == null || !tree.isObject()) {
                    return new MirrorFeedback(null, "not a JSON object", bytes);
                }
                return new MirrorFeedback(Json.bindInternal(tree, Compensation.class), null, bytes);
            } catch (IOException | IllegalArgumentException e) {
                return new MirrorFeedback(null, "malformed compensation: " + Json.problem(e), bytes);
            }
        }

        @Override
        public String namespace() {
            return compensation == null ? null : compensation.namespace();
        }

        @Override
        public String documentId() {
            return null;
        }
    }
}
