package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ChunkerTest {

    @Test
    void keepsAShortDocumentAsOnePassage() {
        String text = "Ada Lovelace wrote the first program. It computed Bernoulli numbers.";

        List<Chunker.Chunk> chunks = new Chunker(64).chunk(text);

        assertThat(chunks).singleElement().satisfies(c -> {
            assertThat(c.text()).isEqualTo(text);
            assertThat(c.start()).isZero();
            assertThat(c.end()).isEqualTo(text.length());
            assertThat(c.headings()).isEmpty();
        });
    }

    @Test
    void splitsAtHeadingsAndRecordsTheHeadingPath() {
        String text =
                "Intro paragraph.\n\n# Life\n\nBorn in London.\n\n## Youth\n\nLiked maths.\n\n# Work\n\nWrote notes.";

        List<Chunker.Chunk> chunks = new Chunker(64).chunk(text);

        assertThat(chunks)
                .extracting(Chunker.Chunk::text)
                .containsExactly("Intro paragraph.", "Born in London.", "Liked maths.", "Wrote notes.");
        assertThat(chunks)
                .extracting(Chunker.Chunk::headings)
                .containsExactly(List.of(), List.of("Life"), List.of("Life", "Youth"), List.of("Work"));
    }

    @Test
    void packsParagraphsUpToTheBudgetAndNeverAcrossIt() {
        String para = "word ".repeat(10).strip() + ".";
        String text = String.join("\n\n", para, para, para, para, para);

        List<Chunker.Chunk> chunks = new Chunker(25).chunk(text);

        // each paragraph is 11 tokens: two fit in 25, three do not
        assertThat(chunks).hasSize(3);
        assertThat(chunks)
                .allSatisfy(c -> assertThat(Chunker.countTokens(c.text())).isLessThanOrEqualTo(25));
    }

    @Test
    void splitsALongParagraphAtSentencesAndALongSentenceAtWords() {
        String sentence = "This sentence has exactly eight words in it. ";
        String longSentence = "long ".repeat(70).strip() + ".";
        String text = sentence.repeat(6) + longSentence;

        List<Chunker.Chunk> chunks = new Chunker(20).chunk(text);

        assertThat(chunks)
                .allSatisfy(c -> assertThat(Chunker.countTokens(c.text())).isLessThanOrEqualTo(20));
        assertThat(chunks.get(0).text()).startsWith("This sentence").endsWith("in it.");
        assertThat(String.join(" ", chunks.stream().map(Chunker.Chunk::text).toList())
                        .split("\\s+"))
                .as("no word is lost")
                .hasSize(text.strip().split("\\s+").length);
    }

    @Test
    void offsetsPointAtTheChunkTextInTheDocument() {
        String text = "# Título\n\nÜber café — naïve résumé.\n\n\n  Second paragraph with emoji 🙂 here.  \n";

        List<Chunker.Chunk> chunks = new Chunker(16).chunk(text);

        assertThat(chunks).isNotEmpty().allSatisfy(c -> assertThat(text.substring(c.start(), c.end()))
                .isEqualTo(c.text()));
    }

    @Test
    void readsMarkdownAsCommonMarkDoes() {
        String text = """
                ---
                title: Storage
                tags: [disk]
                ---
                Intro paragraph.

                ```sh
                # or: a comment, not a heading

                make install
                ```

                Setext Title
                ============

                Under it.
                """;
        List<Chunker.Chunk> chunks = new Chunker(64).chunk(text);

        assertThat(chunks)
                .extracting(Chunker.Chunk::text)
                .containsExactly(
                        "Intro paragraph.\n\n```sh\n# or: a comment, not a heading\n\nmake install\n```", "Under it.");
        assertThat(chunks).extracting(Chunker.Chunk::headings).containsExactly(List.of(), List.of("Setext Title"));
        assertThat(chunks)
                .allSatisfy(c -> assertThat(text.substring(c.start(), c.end())).isEqualTo(c.text()));
        // front matter that is not a YAML mapping is Markdown: a rule (alone, no passage), a setext heading, text
        List<Chunker.Chunk> notYaml = new Chunker(64).chunk("---\njust a line\n---\nmore");
        assertThat(notYaml).extracting(Chunker.Chunk::text).containsExactly("more");
        assertThat(notYaml)
                .extracting(Chunker.Chunk::headings)
                .containsExactly(List.of("", "just a line")); // a level-2 heading
        assertThat(new Chunker(64).chunk("***\n\n| --- | --- |\n\n---"))
                .as("no letter or digit")
                .isEmpty();
    }

    @Test
    void linesOfTextAboveARuleStayText() {
        String text = "Notes\nAlice said the deploy is Friday.\n---\nBob agreed.";
        List<Chunker.Chunk> chunks = new Chunker(64).chunk(text);

        assertThat(chunks).extracting(Chunker.Chunk::text).containsExactly(text);
        assertThat(chunks).extracting(Chunker.Chunk::headings).containsExactly(List.of());
        String longLine = "word ".repeat(30).strip();
        assertThat(new Chunker(64).chunk(longLine + "\n===\nMore."))
                .extracting(Chunker.Chunk::headings)
                .containsExactly(List.of());
    }

    @Test
    void aCodeBlockIsOneUnitAndOverBudgetIsCutAtLineEnds() {
        String code = "```\n" + "call(a, b);\n\n".repeat(30) + "```";
        List<Chunker.Chunk> chunks = new Chunker(32).chunk("Before.\n\n" + code + "\n\nAfter.");

        assertThat(chunks)
                .allSatisfy(c -> assertThat(Chunker.countTokens(c.text())).isLessThanOrEqualTo(32));
        assertThat(chunks).allSatisfy(c -> assertThat(c.text()).doesNotStartWith("a, b"));
        assertThat(String.join("\n", chunks.stream().map(Chunker.Chunk::text).toList()))
                .contains("call(a, b);")
                .endsWith("After.");
        // within budget, blank lines inside a fence do not split it
        String small = "```\nx = 1\n\n\ny = 2\n```";
        assertThat(new Chunker(32).chunk(small)).extracting(Chunker.Chunk::text).containsExactly(small);
    }

    @Test
    void ignoresWhitespaceOnlyDocuments() {
        assertThat(new Chunker(32).chunk("  \n\n \t ")).isEmpty();
    }

    @Test
    void refusesATinyBudget() {
        assertThatThrownBy(() -> new Chunker(3)).isInstanceOf(IllegalArgumentException.class);
    }

    // The scans that replaced the regular expressions below find what those found, on every string of a small
    // alphabet that holds their edge cases; the expressions stay here as the specification.
    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})[ \\t]+(.+?)[ \\t#]*$", Pattern.MULTILINE);
    private static final Pattern PARAGRAPH_BREAK = Pattern.compile("\\n[ \\t]*\\n\\s*");
    private static final Pattern TOKEN = Pattern.compile("[\\p{L}\\p{M}\\p{N}_]+|[^\\s\\p{L}\\p{M}\\p{N}_]");
    private static final String ALPHABET = "#  \t\n\n\ra B.\u00e9_1\u0301\u00a0\u2028\u000b\u0085";

    @Test
    void theScansFindTheHeadingsBreaksAndTokensTheExpressionsDefine() {
        Random random = new Random(7);
        for (int round = 0; round < 20_000; round++) {
            StringBuilder b = new StringBuilder();
            int length = random.nextInt(24);
            for (int i = 0; i < length; i++) {
                b.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
            }
            if (random.nextBoolean()) {
                b.insert(0, "#".repeat(1 + random.nextInt(7)));
            }
            String text = b.toString();

            int tokens = 0;
            for (Matcher m = TOKEN.matcher(text); m.find(); ) {
                tokens++;
            }
            assertThat(Chunker.countTokens(text)).as("tokens of %s", text).isEqualTo(tokens);

            List<String> expected = new ArrayList<>();
            for (Matcher m = HEADING.matcher(text); m.find(); ) {
                expected.add(m.group(1).length() + ":" + m.group(2).strip() + "@" + m.end());
            }
            List<String> actual = new ArrayList<>();
            for (int line = 0; line < text.length(); ) {
                int end = line;
                while (end < text.length() && "\n\r\u0085\u2028\u2029".indexOf(text.charAt(end)) < 0) {
                    end++;
                }
                Chunker.Heading h = Chunker.heading(text, line, end);
                if (h != null) {
                    actual.add(h.level() + ":" + h.title() + "@" + end);
                }
                line = end + 1;
            }
            assertThat(actual).as("headings of %s", text).isEqualTo(expected);

            int from = random.nextInt(text.length() + 1);
            List<String> breaks = new ArrayList<>();
            for (Matcher m = PARAGRAPH_BREAK.matcher(text).region(from, text.length()); m.find(); ) {
                breaks.add(m.start() + "-" + m.end());
            }
            List<String> found = new ArrayList<>();
            for (int[] br = Chunker.paragraphBreak(text, from, text.length());
                    br != null;
                    br = Chunker.paragraphBreak(text, br[1], text.length())) {
                found.add(br[0] + "-" + br[1]);
            }
            assertThat(found).as("paragraph breaks of %s from %d", text, from).isEqualTo(breaks);
        }
    }

    /**
     * Documents at the size limit (1 MiB) built to make a backtracking engine take quadratic time or worse: each is
     * chunked in a bounded time (the limit is a hang detector, two orders of magnitude above the time taken).
     */
    @Test
    void hostileDocumentsAtTheSizeLimitAreChunkedInLinearTime() {
        int limit = 1 << 20;
        List<String> hostile = List.of(
                "#" + " #".repeat(limit / 2 - 1),
                "# a" + " ".repeat(limit - 4) + "b",
                "# " + "#\t".repeat(limit / 2 - 1) + "x",
                "\n" + " ".repeat(limit - 2) + "x",
                "\n \t".repeat(limit / 3),
                "x".repeat(limit),
                "\u0301".repeat(limit),
                // nesting and fences, for the Markdown parser
                ">".repeat(limit / 4) + "\n" + "a\n".repeat(limit / 4),
                "- ".repeat(limit / 8) + "x\n" + "  a\n".repeat(limit / 8),
                "```\n" + "# no\n".repeat(limit / 5),
                "```\n```\n".repeat(limit / 8),
                "#\n~~~\n~~~\n".repeat(limit / 10), // as many headings as fences
                "---\n" + "a: b\n".repeat(limit / 5),
                "---\n" + "x: &a [" + "*a,".repeat(limit / 4) + "]\n---\n");
        Chunker chunker = new Chunker(256);
        for (String text : hostile) {
            List<Chunker.Chunk> chunks = assertTimeoutPreemptively(
                    Duration.ofSeconds(20),
                    () -> chunker.chunk(text),
                    () -> "chunking " + text.substring(0, 8).replace("\n", "\\n") + "…");
            assertThat(chunks).allSatisfy(c -> assertThat(text.substring(c.start(), c.end()))
                    .isEqualTo(c.text()));
        }
    }

    /**
     * Every passage of a section carries its headings: a heading line a mebibyte long over a long body would be copied
     * into each of its thousand passages. Past 300 characters, an ATX heading's line is text of its section.
     */
    @Test
    void aHeadingLongerThanAHeadingCanBeIsTextNotEveryPassagesHeading() {
        String longTitle = "x ".repeat(250_000).strip();
        String text = "# " + longTitle + "\n\n" + "y ".repeat(250_000);
        List<Chunker.Chunk> chunks = new Chunker(200).chunk(text);
        assertThat(chunks).hasSizeGreaterThan(1000);
        assertThat(chunks).allSatisfy(c -> assertThat(c.headings()).isEmpty());
        assertThat(chunks.get(0).text()).startsWith("# x x");

        String atLimit = "t".repeat(300);
        assertThat(new Chunker(200).chunk("# " + atLimit + "\n\nbody").get(0).headings())
                .containsExactly(atLimit);
        assertThat(new Chunker(200).chunk("# " + atLimit + "t\n\nbody").get(0).headings())
                .isEmpty();
    }
}
