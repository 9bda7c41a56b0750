package dev.engram.understanding;

import java.util.ArrayList;
import java.util.List;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.Heading;
import org.commonmark.node.Node;
import org.commonmark.node.SourceSpan;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.Parser;

/**
 * The blocks of a Markdown text that chunking and extraction need, as CommonMark reads them (commonmark-java): its
 * top-level headings, ATX ({@code ## Title}) and setext (a line underlined with {@code ===} or {@code ---}), and its
 * fenced code blocks at any depth. A {@code #} line inside a fence is code, not a heading. Only blocks are parsed
 * (inline parsing is off: nothing here needs emphasis or links), which keeps the parse linear in the text.
 */
final class MarkdownBlocks {

    /** The longest line read as a setext heading's title. */
    static final int MAX_SETEXT = 120;

    /**
     * The longest title read as an ATX heading's: every passage of a section carries its headings, so a longer line
     * stays text of its section rather than be copied into each.
     */
    static final int MAX_ATX = 300;

    /** A top-level heading at {@code [start, end)} of the text, with its level and title. */
    record Heading(int start, int end, int level, String title) {}

    /**
     * The headings in text order (a setext heading only of one line of at most {@link #MAX_SETEXT} characters, an ATX
     * heading only of a title of at most {@link #MAX_ATX}), and
     * the fenced code blocks' {@code [start, end)} in text order.
     */
    record Blocks(List<Heading> headings, List<int[]> fences) {}

    private static final Parser PARSER = Parser.builder()
            .includeSourceSpans(IncludeSourceSpans.BLOCKS)
            .inlineParserFactory(context -> (lines, node) -> {})
            .build();

    private MarkdownBlocks() {}

    /** The blocks of {@code text} from {@code from} on (offsets are into {@code text}). */
    static Blocks of(String text, int from) {
        Node doc = PARSER.parse(from == 0 ? text : text.substring(from));
        List<Heading> headings = new ArrayList<>();
        for (Node n = doc.getFirstChild(); n != null; n = n.getNext()) {
            if (n instanceof org.commonmark.node.Heading h
                    && !h.getSourceSpans().isEmpty()) {
                Heading heading = heading(text, from, h);
                if (heading != null) {
                    headings.add(heading);
                }
            }
        }
        List<int[]> fences = new ArrayList<>();
        doc.accept(new AbstractVisitor() {
            @Override
            public void visit(FencedCodeBlock code) {
                int[] span = span(text, from, code);
                if (span != null) {
                    fences.add(span);
                }
            }
        });
        return new Blocks(headings, fences);
    }

    /**
     * {@code text} with its fenced code blocks blanked: every character of them but line ends a space, so offsets
     * stay. What reads prose for names and facts does not read code as prose.
     */
    static String withoutCode(String text) {
        if (!text.contains("```") && !text.contains("~~~")) {
            return text;
        }
        List<int[]> fences = of(text, 0).fences();
        if (fences.isEmpty()) {
            return text;
        }
        char[] out = text.toCharArray();
        for (int[] f : fences) {
            for (int i = f[0]; i < f[1]; i++) {
                if (out[i] != '\n' && out[i] != '\r') {
                    out[i] = ' ';
                }
            }
        }
        return new String(out);
    }

    private static Heading heading(String text, int from, org.commonmark.node.Heading h) {
        List<SourceSpan> spans = h.getSourceSpans();
        int[] whole = span(text, from, h);
        SourceSpan first = spans.get(0);
        int lineStart = lineStart(text, from + first.getInputIndex());
        int lineEnd = lineEnd(text, from + first.getInputIndex());
        Chunker.Heading atx = Chunker.heading(text, lineStart, lineEnd);
        String title;
        if (atx != null && spans.size() == 1) {
            if (atx.title().length() > MAX_ATX) {
                return null;
            }
            title = atx.title();
        } else {
            // setext: the line above the underline. Lines of plain text above a "---" or "===" rule are a paragraph
            // with a rule under it far more often than a heading: a setext heading of more than one line, or of more
            // than MAX_SETEXT characters, stays text.
            if (spans.size() > 2) {
                return null;
            }
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < spans.size() - 1; i++) {
                SourceSpan s = spans.get(i);
                sb.append(i == 0 ? "" : " ")
                        .append(text, from + s.getInputIndex(), from + s.getInputIndex() + s.getLength());
            }
            title = sb.toString().strip();
            if (title.length() > MAX_SETEXT) {
                return null;
            }
        }
        return new Heading(whole[0], whole[1], h.getLevel(), title);
    }

    /** The lines a block spans, whole, as {@code [start, end)} of the text; null when it has no span. */
    private static int[] span(String text, int from, Node block) {
        List<SourceSpan> spans = block.getSourceSpans();
        if (spans.isEmpty()) {
            return null;
        }
        SourceSpan first = spans.get(0);
        SourceSpan last = spans.get(spans.size() - 1);
        int start = lineStart(text, from + first.getInputIndex());
        int end = lineEnd(text, from + last.getInputIndex() + last.getLength());
        return new int[] {start, end};
    }

    private static int lineStart(String text, int i) {
        while (i > 0 && text.charAt(i - 1) != '\n' && text.charAt(i - 1) != '\r') {
            i--;
        }
        return i;
    }

    private static int lineEnd(String text, int i) {
        while (i < text.length() && text.charAt(i) != '\n' && text.charAt(i) != '\r') {
            i++;
        }
        return i;
    }
}
