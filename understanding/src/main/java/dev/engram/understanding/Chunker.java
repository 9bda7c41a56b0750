package dev.engram.understanding;

import java.text.BreakIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Structure-aware chunking: sections by Markdown headings, then paragraphs (blank lines) packed greedily up to a
 * token budget; a paragraph over budget is split at sentence boundaries, and a sentence over budget at word
 * boundaries. Tokens are approximated as words and punctuation marks, which tracks WordPiece counts closely for
 * English prose. Offsets are UTF-16 positions into the original text, so a chunk can always be cited.
 */
public final class Chunker {

    /** One chunk of a document: its text, offsets and the heading path above it. */
    public record Chunk(String text, int start, int end, List<String> headings) {}

    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})[ \\t]+(.+?)[ \\t#]*$", Pattern.MULTILINE);
    private static final Pattern PARAGRAPH_BREAK = Pattern.compile("\\n[ \\t]*\\n\\s*");
    private static final Pattern TOKEN = Pattern.compile("[\\p{L}\\p{M}\\p{N}_]+|[^\\s\\p{L}\\p{M}\\p{N}_]");

    private final int maxTokens;

    public Chunker(int maxTokens) {
        if (maxTokens < 16) {
            throw new IllegalArgumentException("maxTokens must be at least 16, was " + maxTokens);
        }
        this.maxTokens = maxTokens;
    }

    public int maxTokens() {
        return maxTokens;
    }

    /** Approximate token count: words and punctuation marks. */
    public static int countTokens(CharSequence text) {
        Matcher m = TOKEN.matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    public List<Chunk> chunk(String text) {
        List<Chunk> out = new ArrayList<>();
        List<String> path = new ArrayList<>();
        int sectionStart = 0;
        Matcher h = HEADING.matcher(text);
        while (h.find()) {
            chunkSection(text, sectionStart, h.start(), List.copyOf(path), out);
            int level = h.group(1).length();
            while (path.size() >= level) {
                path.remove(path.size() - 1);
            }
            while (path.size() < level - 1) {
                path.add("");
            }
            path.add(h.group(2).strip());
            sectionStart = h.end();
        }
        chunkSection(text, sectionStart, text.length(), List.copyOf(path), out);
        return out;
    }

    private void chunkSection(String text, int from, int to, List<String> headings, List<Chunk> out) {
        List<int[]> units = new ArrayList<>();
        Matcher b = PARAGRAPH_BREAK.matcher(text).region(from, to);
        int start = from;
        while (b.find()) {
            addParagraph(text, start, b.start(), units);
            start = b.end();
        }
        addParagraph(text, start, to, units);
        pack(text, units, headings, out);
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
        Matcher m = TOKEN.matcher(text).region(from, to);
        int pieceStart = -1;
        int pieceEnd = -1;
        int n = 0;
        while (m.find()) {
            if (pieceStart < 0) {
                pieceStart = m.start();
            }
            if (n == maxTokens) {
                units.add(new int[] {pieceStart, pieceEnd});
                pieceStart = m.start();
                n = 0;
            }
            pieceEnd = m.end();
            n++;
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
