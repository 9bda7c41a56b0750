package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.DocumentEvent;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.understanding.Chunker;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A passage's id and hash change exactly when what its understanding depends on changes. */
class ReadPassagesTest {

    private static final Chunker CHUNKER = new Chunker(200);

    private static List<String> ids(String text, Map<String, Object> metadata, String eventTime) {
        DocumentEvent event = new DocumentEvent(
                "chat",
                "t1",
                DocumentEvent.Op.UPSERT,
                "",
                text,
                null,
                metadata,
                eventTime == null ? null : Instant.parse(eventTime));
        return ReadProcessor.passages(CHUNKER, event).stream()
                .map(ReadProcessor.Planned::ref)
                .map(PassageRef::passageId)
                .toList();
    }

    @Test
    void whoSaysATurnIsPartOfWhatItMeans() {
        Map<String, Object> caroline = Map.of("speaker", "Caroline", "participants", List.of("Caroline", "Melanie"));
        Map<String, Object> melanie = Map.of("speaker", "Melanie", "participants", List.of("Caroline", "Melanie"));
        String text = "I love painting.";

        assertThat(ids(text, caroline, null)).isNotEqualTo(ids(text, melanie, null));
        assertThat(ids(text, caroline, null)).isNotEqualTo(ids(text, Map.of(), null));
        // metadata that is not about the conversation does not make the passage another one
        assertThat(ids(text, Map.of("lang", "en"), null)).isEqualTo(ids(text, Map.of(), null));
        assertThat(ids(text, caroline, null))
                .isEqualTo(ids(
                        text,
                        Map.of("speaker", "Caroline", "participants", List.of("Caroline", "Melanie"), "session", 4),
                        null));
    }

    @Test
    void theDayOfWritingCountsOnlyForTextThatSpeaksRelativeToIt() {
        String relative = "We met yesterday.";
        String absolute = "We met on 7 May 2023.";

        assertThat(ids(relative, Map.of(), "2023-05-08T10:00:00Z"))
                .isNotEqualTo(ids(relative, Map.of(), "2023-05-09T10:00:00Z"));
        assertThat(ids(relative, Map.of(), "2023-05-08T10:00:00Z"))
                .as("the same day, another hour")
                .isEqualTo(ids(relative, Map.of(), "2023-05-08T22:00:00Z"));
        assertThat(ids(absolute, Map.of(), "2023-05-08T10:00:00Z"))
                .isEqualTo(ids(absolute, Map.of(), "2024-01-01T00:00:00Z"))
                .isEqualTo(ids(absolute, Map.of(), null));
    }

    @Test
    void frontMatterIsMetadataAndGivesTheTitleWhenTheEventHasNone() {
        String text = "---\ntitle: Storage\n---\n# Disks\n\nEngram keeps state in RocksDB.";
        DocumentEvent untitled = DocumentEvent.upsert("docs", "storage.md", "", text);
        List<ReadProcessor.Planned> planned = ReadProcessor.passages(CHUNKER, untitled);

        assertThat(planned).extracting(p -> p.chunk().text()).containsExactly("Engram keeps state in RocksDB.");
        assertThat(ReadProcessor.title(untitled)).isEqualTo("Storage");
        assertThat(ReadProcessor.title(DocumentEvent.upsert("docs", "storage.md", "Given", text)))
                .isEqualTo("Given");
        assertThat(ReadProcessor.title(DocumentEvent.upsert("docs", "x", "", "---\nnot: [yaml\n---\nx")))
                .isEmpty();
    }
}
