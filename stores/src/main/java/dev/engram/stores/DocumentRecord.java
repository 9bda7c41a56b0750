package dev.engram.stores;

import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.EventPosition;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A document as the memory knows it: the latest manifest, and how many of the manifest's passages are in memory
 * ({@code present}), which decides its status. {@code input} is where the document event of this version sits on the
 * documents topic (null before its manifest arrived, and for records written before positions were recorded);
 * {@code notes} are its manifest's reading notes.
 */
public record DocumentRecord(
        String namespace,
        String id,
        long version,
        DocumentStatus status,
        String title,
        String source,
        Map<String, Object> metadata,
        Instant eventTime,
        List<PassageRef> passages,
        int present,
        Instant updatedAt,
        EventPosition input,
        List<String> notes) {
    public DocumentRecord {
        passages = passages == null ? List.of() : List.copyOf(passages);
        metadata = metadata == null ? Map.of() : metadata;
        notes = notes == null ? List.of() : List.copyOf(notes);
    }
}
