package dev.engram.understanding;

import dev.engram.schemas.DocumentEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.jsoup.nodes.Node;
import org.jsoup.nodes.TextNode;
import org.jsoup.select.NodeVisitor;

/**
 * An HTML page read as the text chunking and extraction read (jsoup): headings as {@code #} lines, blocks as
 * paragraphs, {@code <pre>} as a fenced code block with its lines kept, scripts, styles and the head left out; its
 * title from {@code <title>}, else empty.
 *
 * @param title the page's {@code <title>}, stripped, or ""
 * @param text the page's text
 */
public record HtmlText(String title, String text) {

    private static final Set<String> SKIPPED = Set.of("script", "style", "noscript", "template", "svg", "head");

    /**
     * Whether a document event's text is an HTML page: its {@code metadata.content_type} says {@code text/html}, or
     * the text opens with {@code <!doctype html} or {@code <html}.
     */
    public static boolean is(DocumentEvent event) {
        if (event.metadata().get("content_type") instanceof String type
                && type.strip().toLowerCase(Locale.ROOT).startsWith("text/html")) {
            return true;
        }
        String text = event.text();
        if (text == null) {
            return false;
        }
        int i = 0;
        while (i < text.length() && i < 1024 && Character.isWhitespace(text.charAt(i))) {
            i++;
        }
        String head = text.substring(i, Math.min(text.length(), i + 16)).toLowerCase(Locale.ROOT);
        return head.startsWith("<!doctype html") || head.startsWith("<html");
    }

    /** The text of an HTML page given as a string. */
    public static HtmlText of(String html) {
        return of(Jsoup.parse(html));
    }

    /** The text of a parsed page. */
    public static HtmlText of(Document page) {
        Element body = page.body();
        body.select(String.join(",", SKIPPED)).remove();
        List<String> blocks = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        body.traverse(new NodeVisitor() {
            private int inPre;
            /** The heading level of the block being read (0: a paragraph). */
            private int level;

            @Override
            public void head(Node node, int depth) {
                if (node instanceof TextNode t) {
                    if (inPre == 0) {
                        current.append(t.text());
                    }
                } else if (node instanceof Element e && e.nameIs("pre")) {
                    if (inPre++ == 0) {
                        flush(blocks, current, level);
                        level = 0;
                        String code = e.wholeText().strip();
                        if (!code.isEmpty()) {
                            blocks.add("```\n" + code.replace("```", "'''") + "\n```");
                        }
                    }
                } else if (inPre == 0 && node instanceof Element e && breaks(e)) {
                    flush(blocks, current, level);
                    level = heading(e);
                }
            }

            @Override
            public void tail(Node node, int depth) {
                if (node instanceof Element e && e.nameIs("pre")) {
                    inPre--;
                } else if (inPre == 0 && node instanceof Element e && breaks(e)) {
                    flush(blocks, current, level);
                    level = 0;
                }
            }
        });
        flush(blocks, current, 0);
        return new HtmlText(collapse(page.title()), String.join("\n\n", blocks));
    }

    private static boolean breaks(Element e) {
        return e.isBlock() || heading(e) > 0 || e.nameIs("br");
    }

    private static int heading(Element e) {
        String tag = e.normalName();
        return tag.length() == 2 && tag.charAt(0) == 'h' && tag.charAt(1) >= '1' && tag.charAt(1) <= '6'
                ? tag.charAt(1) - '0'
                : 0;
    }

    /**
     * Ends a block: its text with white space collapsed, as a heading of {@code level} (0: a paragraph). Text that
     * Markdown would read otherwise — a leading {@code #} ("# of items"), a backtick or tilde run that would open a
     * code block — is escaped, so only the page's own headings and {@code <pre>} are headings and code.
     */
    private static void flush(List<String> blocks, StringBuilder current, int level) {
        String text = collapse(current);
        current.setLength(0);
        if (text.isEmpty()) {
            return; // an empty heading is no block
        }
        char first = text.charAt(0);
        if (first == '#' || first == '`' || first == '~') {
            text = "\\" + text;
        }
        blocks.add(level > 0 ? "#".repeat(level) + " " + text : text);
    }

    /** White space runs as one space, stripped. */
    static String collapse(CharSequence s) {
        StringBuilder out = new StringBuilder(s.length());
        boolean space = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r') {
                space = true;
                continue;
            }
            if (space && !out.isEmpty()) {
                out.append(' ');
            }
            space = false;
            out.append(c);
        }
        return out.toString();
    }
}
