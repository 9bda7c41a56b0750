package dev.engram.schemas;

/** A half-open range [start, end) of UTF-16 offsets into a passage's text. */
public record Span(int start, int end) {
    public Span {
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("bad span [" + start + ", " + end + ")");
        }
    }
}
