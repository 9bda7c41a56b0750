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
        // the session is where the turn stands
        assertThat(ids(text, caroline, null))
                .isNotEqualTo(ids(
                        text,
                        Map.of("speaker", "Caroline", "participants", List.of("Caroline", "Melanie"), "session", 4),
                        null));
    }

    @Test
    void theDayATurnWasSaidCountsAndADocumentsEventTimeDoesNot() {
        Map<String, Object> turn = Map.of("speaker", "Ann", "participants", List.of("Ann", "Bob"));
        String relative = "We met yesterday.";

        assertThat(ids(relative, turn, "2023-05-08T10:00:00Z"))
                .isNotEqualTo(ids(relative, turn, "2023-05-09T10:00:00Z"));
        assertThat(ids(relative, turn, "2023-05-08T10:00:00Z"))
                .as("the same day, another hour")
                .isEqualTo(ids(relative, turn, "2023-05-08T22:00:00Z"));
        // a document that is no turn keeps its passages whatever its event time
        assertThat(ids(relative, Map.of(), "2023-05-08T10:00:00Z"))
                .isEqualTo(ids(relative, Map.of(), "2024-01-01T00:00:00Z"))
                .isEqualTo(ids(relative, Map.of(), null));
    }

    @Test
    void frontMatterIsMetadataAndGivesTheTitleWhenTheEventHasNone() {
        String text = "---\ntitle: Storage\n---\n# Disks\n\nEngram keeps state in RocksDB.";
        DocumentEvent untitled = DocumentEvent.upsert("docs", "storage.md", "", text);
        List<ReadProcessor.Planned> planned = ReadProcessor.passages(CHUNKER, untitled);

        assertThat(planned).extracting(p -> p.chunk().text()).containsExactly("Engram keeps state in RocksDB.");
        assertThat(planned).extracting(ReadProcessor.Planned::title).containsExactly("Storage");
        assertThat(ReadProcessor.Readable.of(DocumentEvent.upsert("docs", "storage.md", "Given", text))
                        .title())
                .isEqualTo("Given");
        assertThat(ReadProcessor.Readable.of(DocumentEvent.upsert("docs", "x", "", "---\nnot: [yaml\n---\nx"))
                        .title())
                .isEmpty();
    }

    /** Every passage carries its document's title: one read from the text is cut to what an event's may be. */
    @Test
    void aTitleReadFromTheTextIsCutToTheLongestAnEventsTitleMayBe() {
        String longTitle = "t".repeat(1999) + "\uD83D\uDE00" + "t".repeat(60_000);
        String front = "---\ntitle: " + longTitle + "\n---\nBody.";
        List<ReadProcessor.Planned> planned =
                ReadProcessor.passages(CHUNKER, DocumentEvent.upsert("docs", "long.md", "", front));
        // never half a character: the pair that would straddle the limit is left out
        assertThat(planned).extracting(ReadProcessor.Planned::title).containsExactly("t".repeat(1999));
        String page = "<html><head><title>" + "p".repeat(70_000) + "</title></head><body><p>Body.</p></body></html>";
        assertThat(ReadProcessor.passages(CHUNKER, DocumentEvent.upsert("docs", "long.html", "", page)))
                .extracting(ReadProcessor.Planned::title)
                .containsExactly("p".repeat(2000));
        assertThat(ReadProcessor.Readable.cut("short")).isEqualTo("short");
    }

    @Test
    void anHtmlPageIsReadAsItsText() {
        String html = "<!DOCTYPE html><html><head><title>Storage</title><style>p{}</style></head><body>"
                + "<h1>Disks</h1><p>Engram keeps   state in <b>RocksDB</b>.</p>"
                + "<pre>$ make install\n# not a heading</pre><script>alert(1)</script></body></html>";
        List<ReadProcessor.Planned> planned =
                ReadProcessor.passages(CHUNKER, DocumentEvent.upsert("docs", "storage.html", "", html));

        assertThat(planned)
                .extracting(p -> p.chunk().text())
                .containsExactly("Engram keeps state in RocksDB.\n\n```\n$ make install\n# not a heading\n```");
        assertThat(planned).extracting(p -> p.chunk().headings()).containsExactly(List.of("Disks"));
        assertThat(planned).extracting(ReadProcessor.Planned::title).containsExactly("Storage");
        // a content type says so without a doctype; text that merely mentions <html> later is not a page
        DocumentEvent typed = new DocumentEvent(
                "docs",
                "p",
                DocumentEvent.Op.UPSERT,
                "",
                "<p>Hi <i>there</i></p>",
                null,
                Map.of("content_type", "text/html; charset=utf-8"),
                null);
        assertThat(ReadProcessor.passages(CHUNKER, typed))
                .extracting(p -> p.chunk().text())
                .containsExactly("Hi there");
        assertThat(ReadProcessor.passages(CHUNKER, DocumentEvent.upsert("docs", "t", "", "Write <html> first.")))
                .extracting(p -> p.chunk().text())
                .containsExactly("Write <html> first.");
        // text that Markdown would read as a heading or a code fence is text
        String literal = "<html><body><p># of items</p><p><code>```python</code> starts a block</p><h2>Next</h2>"
                + "<p>After.</p></body></html>";
        assertThat(ReadProcessor.passages(CHUNKER, DocumentEvent.upsert("docs", "l", "", literal)))
                .extracting(p -> p.chunk().headings() + ":" + p.chunk().text())
                .containsExactly("[]:\\# of items\n\n\\```python starts a block", "[, Next]:After.");
        // a page with no text has no passages
        assertThat(ReadProcessor.passages(
                        CHUNKER, DocumentEvent.upsert("docs", "e", "", "<html><script>x</script></html>")))
                .isEmpty();
    }
}
