package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One passage: what a result shows of it. Its title, headings, text and memory are kept on the heap, or, for a
 * passage of a namespace's snapshots ({@link #inArena}), in the namespace's arena, read back when asked for: a
 * snapshot reads them for the few passages a query returns, and for the passages that are new to its BM25 index.
 * Read several of them at once through {@link #texts()}: each accessor reads the arena again.
 */
public final class Passage {
    private final String id;
    private final String documentId;
    private final int start;
    private final int end;
    /** Where the texts are, or null when they are in {@link #onHeap}. */
    private final VectorArena arena;

    private final long handle;
    private final Texts onHeap;
    /**
     * What stands for the passage's texts in a namespace's term cache: the same object as long as the texts do not
     * change, also when they move to another arena.
     */
    private final Object textKey;
    /** Its title's key in a snapshot's {@link TitleLinks}, or 0 when the title links nowhere. */
    private final long titleKey;

    /** A passage's title, headings, text and memory. */
    public record Texts(String title, List<String> headings, String text, String memory) {}

    /** A passage whose texts are kept on the heap. */
    public Passage(
            String id,
            String documentId,
            String title,
            List<String> headings,
            String text,
            String memory,
            int start,
            int end) {
        this(
                id,
                documentId,
                start,
                end,
                null,
                VectorArena.NONE,
                new Texts(title, headings, text, memory),
                null,
                TitleLinks.keyOf(title));
    }

    private Passage(
            String id,
            String documentId,
            int start,
            int end,
            VectorArena arena,
            long handle,
            Texts onHeap,
            Object textKey,
            long titleKey) {
        this.id = id;
        this.titleKey = titleKey;
        this.documentId = documentId;
        this.start = start;
        this.end = end;
        this.arena = arena;
        this.handle = handle;
        this.onHeap = onHeap;
        this.textKey = textKey != null ? textKey : onHeap != null ? onHeap : new Object();
    }

    /**
     * A passage whose title, headings, text and memory are appended to {@code arena} (kept on the heap if they are
     * too long for it, which passages are not).
     */
    public static Passage inArena(
            VectorArena arena,
            String id,
            String documentId,
            String title,
            List<String> headings,
            String text,
            String memory,
            int start,
            int end) {
        List<String> fields = new ArrayList<>(headings == null ? 4 : 4 + headings.size());
        fields.add(title);
        fields.add(text);
        fields.add(memory);
        // the headings' count, then them: null headings stay null, as on the heap
        fields.add(headings == null ? null : Integer.toString(headings.size()));
        if (headings != null) {
            fields.addAll(headings);
        }
        byte[] packed = PackedStrings.pack(fields);
        if (packed.length > 4L * (VectorArena.MAX_LENGTH - 1)) {
            return new Passage(id, documentId, title, headings, text, memory, start, end);
        }
        return new Passage(
                id, documentId, start, end, arena, arena.addBytes(packed), null, null, TitleLinks.keyOf(title));
    }

    /**
     * This passage with its texts copied into {@code to}: what a compaction of its arena keeps. It stands for the
     * same texts in the term cache.
     */
    public Passage movedTo(VectorArena to) {
        if (arena == null) {
            return this;
        }
        return new Passage(id, documentId, start, end, to, to.addBytes(arena.bytes(handle)), null, textKey, titleKey);
    }

    /** Counts the texts as no longer used in their arena: the passage changed or went. */
    public void retire() {
        if (arena != null) {
            arena.retire(handle);
        }
    }

    /** About the heap the passage holds, its texts included when they are on the heap. */
    public long heapBytes() {
        long bytes = 72 + 2L * (length(id) + length(documentId));
        if (onHeap != null) {
            bytes += 2L * (length(onHeap.title()) + length(onHeap.text()) + length(onHeap.memory()));
            for (String h : onHeap.headings() == null ? List.<String>of() : onHeap.headings()) {
                bytes += 40 + 2L * length(h);
            }
        }
        return bytes;
    }

    /** About how many bytes its texts take, where they are kept. */
    public long textBytes() {
        return onHeap != null
                ? length(onHeap.title()) + length(onHeap.text()) + length(onHeap.memory())
                : 4L * VectorArena.length(handle);
    }

    private static int length(String s) {
        return s == null ? 0 : s.length();
    }

    /** The passage's texts, read once. */
    public Texts texts() {
        if (onHeap != null) {
            return onHeap;
        }
        List<String> f = PackedStrings.unpack(arena.bytes(handle));
        List<String> headings = f.get(3) == null ? null : Collections.unmodifiableList(f.subList(4, f.size()));
        return new Texts(f.get(0), headings, f.get(1), f.get(2));
    }

    /** What stands for the passage's texts in a term cache: one object for as long as they do not change. */
    Object textKey() {
        return textKey;
    }

    long titleKey() {
        return titleKey;
    }

    public String id() {
        return id;
    }

    public String documentId() {
        return documentId;
    }

    public String title() {
        // the title alone: a passage's text and memory are not decoded to read it (the bridge step reads titles)
        return onHeap != null ? onHeap.title() : PackedStrings.get(arena.bytes(handle), 0);
    }

    public List<String> headings() {
        return texts().headings();
    }

    public String text() {
        return texts().text();
    }

    public String memory() {
        return texts().memory();
    }

    public int start() {
        return start;
    }

    public int end() {
        return end;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Passage p
                && Objects.equals(id, p.id)
                && Objects.equals(documentId, p.documentId)
                && start == p.start
                && end == p.end
                && texts().equals(p.texts());
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, documentId, start, end);
    }

    @Override
    public String toString() {
        return "Passage[id=" + id + ", documentId=" + documentId + ", start=" + start + ", end=" + end + "]";
    }
}
