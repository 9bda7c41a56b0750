package dev.engram.understanding;

import dev.engram.schemas.UnicodeText;
import java.text.BreakIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Structure-aware chunking: sections by Markdown headings (CommonMark's, past a YAML front matter; code fences kept
 * whole), then paragraphs (blank lines) packed greedily up to a
 * token budget; a paragraph over budget is split at sentence boundaries, and a sentence over budget at word
 * boundaries. Tokens are approximated as words and punctuation marks, which tracks WordPiece counts closely for
 * English prose. Offsets are UTF-16 positions into the original text, so a chunk can always be cited.
 *
 * <p>Documents are untrusted: headings, paragraph breaks and tokens are found by plain scans, each character looked
 * at a bounded number of times, so the time to chunk grows linearly with the text whatever it holds (a heading line
 * of a million {@code " #"}, say).
 */
public final class Chunker {

    /** One chunk of a document: its text, offsets and the heading path above it. */
    public record Chunk(String text, int start, int end, List<String> headings) {}

    private final int maxTokens;

    public Chunker(int maxTokens) {
        if (maxTokens < 16) {
            throw new IllegalArgumentException("maxTokens must be at least 16, was " + maxTokens);
        }
        this.maxTokens = maxTokens;
    }

    /** Approximate token count: words and punctuation marks. */
    public static int countTokens(CharSequence text) {
        int n = 0;
        for (int i = skipSpace(text, 0, text.length()); i < text.length(); ) {
            i = skipSpace(text, tokenEnd(text, i, text.length()), text.length());
            n++;
        }
        return n;
    }

    /**
     * Where the token that starts at {@code i} (not a space) ends: a run of letters, marks, digits and underscores, or
     * any other single code point.
     */
    private static int tokenEnd(CharSequence text, int i, int to) {
        int cp = Character.codePointAt(text, i);
        int end = i + Character.charCount(cp);
        if (!wordChar(cp)) {
            return end;
        }
        while (end < to) {
            cp = Character.codePointAt(text, end);
            if (!wordChar(cp)) {
                break;
            }
            end += Character.charCount(cp);
        }
        return end;
    }

    private static int skipSpace(CharSequence text, int i, int to) {
        while (i < to && UnicodeText.space(text.charAt(i))) {
            i++;
        }
        return i;
    }

    /** A letter, mark, number or underscore. */
    private static boolean wordChar(int cp) {
        return cp == '_' || UnicodeText.letterOrNumber(cp) || UnicodeText.mark(cp);
    }

    /**
     * The chunks of {@code text}, read as Markdown: a YAML front matter is metadata, not text ({@link FrontMatter});
     * sections start at top-level headings as CommonMark reads them ({@link MarkdownBlocks}: a {@code #} line in a
     * code fence is code); a fenced code block is one unit, never cut at its blank lines, and is split at line ends
     * only when it is over budget. Plain text reads as paragraphs, as before. A chunk without a letter or digit (a
     * rule alone) is left out.
     */
    public List<Chunk> chunk(String text) {
        int body = text.startsWith("---") ? FrontMatter.of(text).body() : 0;
        MarkdownBlocks.Blocks blocks = MarkdownBlocks.of(text, body);
        List<Chunk> out = new ArrayList<>();
        List<String> path = new ArrayList<>();
        int sectionStart = body;
        for (MarkdownBlocks.Heading h : blocks.headings()) {
            chunkSection(text, sectionStart, h.start(), List.copyOf(path), blocks.fences(), out);
            while (path.size() >= h.level()) {
                path.remove(path.size() - 1);
            }
            while (path.size() < h.level() - 1) {
                path.add("");
            }
            path.add(h.title());
            sectionStart = h.end();
        }
        chunkSection(text, sectionStart, text.length(), List.copyOf(path), blocks.fences(), out);
        out.removeIf(c -> !saysAnything(c.text()));
        return out;
    }

    /** Whether a chunk has a letter or digit: a rule ({@code ---}) or a line of table markup alone is no passage. */
    private static boolean saysAnything(String text) {
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            if (Character.isLetterOrDigit(cp)) {
                return true;
            }
            i += Character.charCount(cp);
        }
        return false;
    }

    record Heading(int level, String title) {}

    /**
     * The ATX heading the line {@code [from, to)} holds, or null: up to three spaces, one to six {@code #}, at least
     * one space or tab, then the title, without the spaces, tabs and {@code #} that close the line (but its first
     * character).
     */
    static Heading heading(String text, int from, int to) {
        int i = from;
        while (i < to && i - from < 3 && text.charAt(i) == ' ') {
            i++;
        }
        int hashes = i;
        while (i < to && i - hashes < 7 && text.charAt(i) == '#') {
            i++;
        }
        int level = i - hashes;
        if (level < 1 || level > 6) {
            return null;
        }
        int blank = i;
        while (i < to && (text.charAt(i) == ' ' || text.charAt(i) == '\t')) {
            i++;
        }
        if (i == blank) {
            return null;
        }
        if (i == to) { // only blanks after the marker: the title is one of them
            return i - blank >= 2 ? new Heading(level, "") : null;
        }
        int end = to;
        while (end > i + 1 && " \t#".indexOf(text.charAt(end - 1)) >= 0) {
            end--;
        }
        return new Heading(level, text.substring(i, end).strip());
    }

    private void chunkSection(
            String text, int from, int to, List<String> headings, List<int[]> fences, List<Chunk> out) {
        List<int[]> units = new ArrayList<>();
        int at = from;
        // the fences are in text order and sections come in text order: start at the first that may reach this one
        int lo = 0;
        int hi = fences.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (fences.get(mid)[1] <= from) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for (int f = lo; f < fences.size() && fences.get(f)[0] < to; f++) {
            int[] fence = fences.get(f);
            if (fence[1] <= at) {
                continue;
            }
            paragraphs(text, at, Math.max(at, fence[0]), units);
            addCode(text, Math.max(at, fence[0]), Math.min(to, fence[1]), units);
            at = Math.min(to, fence[1]);
        }
        paragraphs(text, at, to, units);
        pack(text, units, headings, out);
    }

    private void paragraphs(String text, int from, int to, List<int[]> units) {
        int start = from;
        for (int[] b = paragraphBreak(text, from, to); b != null; b = paragraphBreak(text, b[1], to)) {
            addParagraph(text, start, b[0], units);
            start = b[1];
        }
        addParagraph(text, start, to, units);
    }

    /** A code block as one unit; over budget, as runs of whole lines within it (a line over budget cut at words). */
    private void addCode(String text, int from, int to, List<int[]> units) {
        int[] span = trim(text, from, to);
        if (span == null) {
            return;
        }
        if (countTokens(text.substring(span[0], span[1])) <= maxTokens) {
            units.add(span);
            return;
        }
        int runStart = -1;
        int runEnd = -1;
        int tokens = 0;
        for (int line = span[0]; line < span[1]; ) {
            int end = line;
            while (end < span[1] && text.charAt(end) != '\n') {
                end++;
            }
            int t = countTokens(text.substring(line, end));
            if (runStart >= 0 && tokens + t > maxTokens) {
                addTrimmed(text, runStart, runEnd, units);
                runStart = -1;
                tokens = 0;
            }
            if (t > maxTokens) {
                splitWords(text, line, end, units);
            } else {
                runStart = runStart < 0 ? line : runStart;
                runEnd = end;
                tokens += t;
            }
            line = end + 1;
        }
        if (runStart >= 0) {
            addTrimmed(text, runStart, runEnd, units);
        }
    }

    private static void addTrimmed(String text, int from, int to, List<int[]> units) {
        int[] span = trim(text, from, to);
        if (span != null) {
            units.add(span);
        }
    }

    /**
     * The first paragraph break in {@code [from, to)} as {start, end}, or null: a line feed, a line of nothing but
     * spaces and tabs, a line feed, and the white space after it.
     */
    static int[] paragraphBreak(String text, int from, int to) {
        for (int i = from; i < to; i++) {
            if (text.charAt(i) != '\n') {
                continue;
            }
            int j = i + 1;
            while (j < to && (text.charAt(j) == ' ' || text.charAt(j) == '\t')) {
                j++;
            }
            if (j < to && text.charAt(j) == '\n') {
                return new int[] {i, skipSpace(text, j + 1, to)};
            }
            i = j - 1; // no line feed among the blanks: none starts a break
        }
        return null;
    }

    /** Adds the paragraph as one unit, or as sentence/word pieces when it is over budget. */
    private void addParagraph(String text, int from, int to, List<int[]> units) {
        int[] span = trim(text, from, to);
        if (span == null) {
            return;
        }
        if (countTokens(text.substring(span[0], span[1])) <= maxTokens) {
            units.add(span);
            return;
        }
        BreakIterator sentences = BreakIterator.getSentenceInstance(Locale.ROOT);
        sentences.setText(text.substring(span[0], span[1]));
        int s = sentences.first();
        for (int e = sentences.next(); e != BreakIterator.DONE; s = e, e = sentences.next()) {
            int[] sentence = trim(text, span[0] + s, span[0] + e);
            if (sentence == null) {
                continue;
            }
            if (countTokens(text.substring(sentence[0], sentence[1])) <= maxTokens) {
                units.add(sentence);
            } else {
                splitWords(text, sentence[0], sentence[1], units);
            }
        }
    }

    private void splitWords(String text, int from, int to, List<int[]> units) {
        int pieceStart = -1;
        int pieceEnd = -1;
        int n = 0;
        for (int start = skipSpace(text, from, to); start < to; ) {
            int end = tokenEnd(text, start, to);
            if (pieceStart < 0) {
                pieceStart = start;
            }
            if (n == maxTokens) {
                units.add(new int[] {pieceStart, pieceEnd});
                pieceStart = start;
                n = 0;
            }
            pieceEnd = end;
            n++;
            start = skipSpace(text, end, to);
        }
        if (pieceStart >= 0) {
            units.add(new int[] {pieceStart, pieceEnd});
        }
    }

    /** Greedily packs consecutive units into chunks within the budget. */
    private void pack(String text, List<int[]> units, List<String> headings, List<Chunk> out) {
        int chunkStart = -1;
        int chunkEnd = -1;
        int tokens = 0;
        for (int[] u : units) {
            int t = countTokens(text.substring(u[0], u[1]));
            if (chunkStart >= 0 && tokens + t > maxTokens) {
                out.add(new Chunk(text.substring(chunkStart, chunkEnd), chunkStart, chunkEnd, headings));
                chunkStart = -1;
                tokens = 0;
            }
            if (chunkStart < 0) {
                chunkStart = u[0];
            }
            chunkEnd = u[1];
            tokens += t;
        }
        if (chunkStart >= 0) {
            out.add(new Chunk(text.substring(chunkStart, chunkEnd), chunkStart, chunkEnd, headings));
        }
    }

    private static int[] trim(String text, int from, int to) {
        while (from < to && Character.isWhitespace(text.charAt(from))) {
            from++;
        }
        while (to > from && Character.isWhitespace(text.charAt(to - 1))) {
            to--;
        }
        return from < to ? new int[] {from, to} : null;
    }
}
