package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Input of the memory step, keyed by namespace. */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({
    @JsonSubTypes.Type(value = UnderstandingEvent.Understood.class, name = "understood"),
    @JsonSubTypes.Type(value = UnderstandingEvent.Retracted.class, name = "retracted"),
    @JsonSubTypes.Type(value = UnderstandingEvent.Manifest.class, name = "manifest")
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

    /** The full passage list of a document version; a delete has none. */
    record Manifest(
            String namespace,
            String documentId,
            long documentVersion,
            DocumentEvent.Op op,
            String title,
            String source,
            Map<String, Object> metadata,
            Instant eventTime,
            List<PassageRef> passages)
            implements UnderstandingEvent {
        public Manifest {
            passages = passages == null ? List.of() : List.copyOf(passages);
        }
    }

    record PassageRef(String passageId, String contentHash) {}
}
