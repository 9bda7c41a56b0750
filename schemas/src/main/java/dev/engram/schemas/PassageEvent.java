package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.time.Instant;
import java.util.List;

/** What the read step emits per passage, keyed by passage id. */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "op")
@JsonSubTypes({
    @JsonSubTypes.Type(value = PassageEvent.Upsert.class, name = "upsert"),
    @JsonSubTypes.Type(value = PassageEvent.Retraction.class, name = "retract")
})
public sealed interface PassageEvent {

    String namespace();

    String documentId();

    long documentVersion();

    String passageId();

    /**
     * A new or changed passage. Offsets are UTF-16 positions in the document text. {@code conversation} is set when
     * the document is a turn of a conversation (its metadata names a speaker), else null.
     */
    record Upsert(
            String namespace,
            String documentId,
            long documentVersion,
            String passageId,
            int ordinal,
            String contentHash,
            String title,
            List<String> headings,
            String text,
            int start,
            int end,
            String source,
            Instant eventTime,
            Conversation conversation)
            implements PassageEvent {
        public Upsert {
            headings = headings == null ? List.of() : List.copyOf(headings);
            title = title == null ? "" : title;
        }

        /** A passage of a document that is not a conversation's turn. */
        public Upsert(
                String namespace,
                String documentId,
                long documentVersion,
                String passageId,
                int ordinal,
                String contentHash,
                String title,
                List<String> headings,
                String text,
                int start,
                int end,
                String source,
                Instant eventTime) {
            this(
                    namespace,
                    documentId,
                    documentVersion,
                    passageId,
                    ordinal,
                    contentHash,
                    title,
                    headings,
                    text,
                    start,
                    end,
                    source,
                    eventTime,
                    null);
        }
    }

    /** A passage that left its document, because the document changed or was deleted. */
    record Retraction(String namespace, String documentId, long documentVersion, String passageId, Reason reason)
            implements PassageEvent {}

    enum Reason {
        @JsonProperty("updated")
        UPDATED,
        @JsonProperty("deleted")
        DELETED
    }
}
