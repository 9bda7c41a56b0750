package dev.engram.stores;

import java.time.Instant;
import java.util.List;

/**
 * A document's gist, kept up to date passage by passage: one entry per passage in memory (its memory's lead
 * sentence), the gist (the lead sentences of the passages closest to the document's centroid, in reading order) and
 * ComoRAG's episodic windows (sliding windows over the passages in order, sized by the document's length).
 */
public record DocumentGist(
        String namespace,
        String documentId,
        String title,
        List<Entry> entries,
        List<String> gist,
        int windowSize,
        List<Window> windows,
        Instant updatedAt) {

    public DocumentGist {
        entries = entries == null ? List.of() : List.copyOf(entries);
        gist = gist == null ? List.of() : List.copyOf(gist);
        windows = windows == null ? List.of() : List.copyOf(windows);
    }

    /** A passage of the document: where it is and the lead sentence of its memory. */
    public record Entry(String passageId, int ordinal, int start, String lead) {}

    /** An episodic window: consecutive passages and the lead sentences that summarize them. */
    public record Window(int index, List<String> passageIds, String summary) {
        public Window {
            passageIds = passageIds == null ? List.of() : List.copyOf(passageIds);
        }
    }
}
