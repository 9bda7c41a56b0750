package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
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
    void ignoresWhitespaceOnlyDocuments() {
        assertThat(new Chunker(32).chunk("  \n\n \t ")).isEmpty();
    }

    @Test
    void refusesATinyBudget() {
        assertThatThrownBy(() -> new Chunker(3)).isInstanceOf(IllegalArgumentException.class);
    }
}
