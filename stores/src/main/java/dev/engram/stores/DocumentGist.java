package dev.engram.stores;

import java.time.Instant;
import java.util.List;

/**
 * A document's passages in memory, kept up to date passage by passage: one entry per passage (where it is and its
 * memory's lead sentence), in reading order. What is derived from them — the gist (the lead sentences of the
 * passages closest to the document's centroid) and ComoRAG's episodic windows — is made when it is read (see
 * {@link View}), so that a passage's arrival costs one entry, not a pass over the document.
 */
public record DocumentGist(String namespace, String documentId, String title, List<Entry> entries, Instant updatedAt) {

    public DocumentGist {
        entries = entries == null ? List.of() : List.copyOf(entries);
    }

    /** A passage of the document: where it is and the lead sentence of its memory. */
    public record Entry(String passageId, int ordinal, int start, String lead) {}

    /** An episodic window: consecutive passages and the lead sentences that summarize them. */
    public record Window(int index, List<String> passageIds, String summary) {
        public Window {
            passageIds = passageIds == null ? List.of() : List.copyOf(passageIds);
        }
    }

    /** The gist sentences, in reading order, and the episodic windows with their size. */
    public record View(List<String> gist, int windowSize, List<Window> windows) {
        public View {
            gist = List.copyOf(gist);
            windows = List.copyOf(windows);
        }
    }
}
