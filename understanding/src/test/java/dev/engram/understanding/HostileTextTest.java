package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Span;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Text built to make a backtracking regular expression take quadratic time or worse, at the limits the pipeline lets
 * through: a title of 2,000 characters, a passage as long as a chunk can be, an entity name against a long passage.
 * Each is read in a bounded time (the limits are hang detectors, far above the time taken).
 */
class HostileTextTest {

    private static final RuleExtractor EXTRACTOR = new RuleExtractor(new EnglishNlp(), 3);
    private static final Duration BOUND = Duration.ofSeconds(30);

    private static Extraction extract(String title, String text) {
        return assertTimeoutPreemptively(
                BOUND,
                () -> EXTRACTOR.extract(new PassageEvent.Upsert(
                        "ns", "doc", 1, "p", 0, "h", title, List.of(), text, 0, text.length(), null, null)),
                () -> "extracting from " + title.substring(0, Math.min(8, title.length())) + "…");
    }

    @Test
    void titlesAtTheLimitAreReadInLinearTime() {
        String sentences = "Ada Lovelace met Charles Babbage in 1833. ".repeat(200);
        extract("(".repeat(2000), sentences);
        extract("A " + "(".repeat(1000) + " ".repeat(997) + ")", sentences);
        extract(" ".repeat(1999) + "x", sentences);
    }

    /**
     * A title that matches at every letter of a passage of one word a mebibyte long (non-ASCII letters between ASCII
     * ones put a word boundary at every letter), and one that almost matches everywhere; at the schema's 2,000
     * characters too, the longest title an event can carry, and at 60,000, as a front matter's may be.
     */
    @Test
    void aTitleIsFoundInAMebibyteWordInLinearTime() {
        String word = "aé".repeat(1 << 19);
        extract("aé".repeat(60), word); // the longest title looked for: 120 characters, a name's most
        extract("aé".repeat(100), word);
        extract("aé".repeat(1000), word);
        Extraction almost = extract("a".repeat(119) + "b", "a".repeat(1 << 20));
        assertThat(almost.entities()).isEmpty();
        extract("a".repeat(1999) + "b", "a".repeat(1 << 20));
        // a front matter's title may be far longer than an event's (its block is read up to 64 KiB)
        extract("aé".repeat(30_000), word);
    }

    /**
     * A pronoun is replaced by its target's name in the memory text: a "name" of ninety words of 10,000 letters each,
     * and a hundred pronouns after it, would make a memory of 90 million characters.
     */
    @Test
    void aPronounIsNeverReplacedByANameLongerThanANameCanBe() {
        String text = "I met Ada " + ("B" + "b".repeat(9_999) + " ").repeat(90) + "he ".repeat(100);
        Extraction e = extract("T", text);
        assertThat(e.memory().length()).isLessThan(text.length() + 1_000);
        assertThat(e.entities()).allSatisfy(x -> assertThat(x.name().length()).isLessThanOrEqualTo(120));
        // an ordinary name still stands for its pronoun
        assertThat(extract("T", "Ada Lovelace wrote notes. She published them in 1843.")
                        .memory())
                .contains("Ada Lovelace published");
    }

    @Test
    void theTitleIsAMentionWhereItStandsAsAWholeWord() {
        // lower-case words, which only the title makes a name of
        String text = "engine room zero is hot. engine room zeros, xengine room zero and engine room zero_ are not;"
                + " (engine room zero) is.";
        List<Integer> starts = extract("engine room zero (place)", text).entities().stream()
                .filter(e -> e.name().equals("engine room zero"))
                .flatMap(e -> e.spans().stream())
                .map(Span::start)
                .toList();
        assertThat(starts).containsExactly(0, text.indexOf("(engine") + 1);
        assertThat(MentionFinder.wordBoundary("a b", 1)).isTrue();
        assertThat(MentionFinder.wordBoundary("ab", 1)).isFalse();
        assertThat(MentionFinder.wordBoundary("é", 0)).isFalse(); // word characters are ASCII, as in \\b
        assertThat(MentionFinder.wordBoundary("_a", 1)).isFalse();
        assertThat(MentionFinder.wordBoundary("a", 1)).isTrue();
    }

    @Test
    void aTitleLosesOnlyItsClosingParenthetical() {
        assertThat(RuleExtractor.withoutClosingParenthetical("Kill or Be Killed (1966 film)"))
                .isEqualTo("Kill or Be Killed");
        assertThat(RuleExtractor.withoutClosingParenthetical("A (b) c (d (e) ")).isEqualTo("A (b) c");
        assertThat(RuleExtractor.withoutClosingParenthetical("A (b) (c)  ")).isEqualTo("A (b)");
        assertThat(RuleExtractor.withoutClosingParenthetical("A (b (c)")).isEqualTo("A");
        assertThat(RuleExtractor.withoutClosingParenthetical("(x)")).isEmpty();
        assertThat(RuleExtractor.withoutClosingParenthetical("()")).isEmpty();
        assertThat(RuleExtractor.withoutClosingParenthetical("Ada")).isEqualTo("Ada");
    }

    /**
     * Passages as long as the chunker makes them at its largest budget (4,096 tokens, a token being a word or a mark),
     * and a passage of one word a mebibyte long, which the chunker cannot cut.
     */
    @Test
    void passagesOfQuotesDatesAndCapitalsAreReadInLinearTime() {
        int tokens = 4096;
        extract("T", "“".repeat(tokens));
        extract("T", "\"A" + " a".repeat(tokens - 1));
        extract("T", "12 ".repeat(tokens - 1) + "January");
        extract("T", "A".repeat(1 << 20) + ", " + "B.".repeat(tokens / 2 - 1));
        extract("T", "Ada " + "of ".repeat(tokens - 2) + "Lovelace.");
        extract("T", "x".repeat(1 << 20));
    }

    @Test
    void namesAreFoundInLongPassagesInLinearTime() {
        String text = "a".repeat(200_000) + " Ada";
        List<Span> spans = assertTimeoutPreemptively(BOUND, () -> TextSpans.occurrences(text, "a".repeat(119) + "b"));
        assertThat(spans).isEmpty();
        assertThat(TextSpans.occurrences(text, "ADA")).containsExactly(new Span(200_001, 200_004));
        assertThat(TextSpans.occurrences("Ada, ada and Adam.", "Ada")).containsExactly(new Span(0, 3));
        assertThat(TextSpans.occurrences("adam, ada", "Ada")).containsExactly(new Span(6, 9));
        assertThat(TextSpans.occurrences("x", "")).isEmpty();
        String quote = "a ".repeat(150);
        assertTimeoutPreemptively(BOUND, () -> TextSpans.locate(" a".repeat(100_000) + "b", quote + "c"));
        assertThat(TextSpans.locate("Ada  Lovelace wrote", "ada lovelace")).isEqualTo(new Span(0, 13));
        assertThat(TextSpans.locate("Born in İzmir in 1950.", "izmir  in")).isEqualTo(new Span(8, 16));
        assertThat(TextSpans.locate("a\u000bb", "a b")).isEqualTo(new Span(0, 3));
        assertThat(TextSpans.locate("ab", "a b")).isNull();
    }
}
