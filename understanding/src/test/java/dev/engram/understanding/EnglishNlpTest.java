package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import opennlp.tools.util.Span;
import org.junit.jupiter.api.Test;

class EnglishNlpTest {

    @Test
    void aThreadPerCallReusesThePipelinesAndManyAtOnceGetTheSameAnalysis() throws Exception {
        EnglishNlp nlp = new EnglishNlp();
        String text = "Charles Babbage designed the Analytical Engine. Ada Lovelace wrote its first program.";
        List<EnglishNlp.Sentence> alone = nlp.analyse(text);
        // the HTTP API runs each request on a new virtual thread
        for (int i = 0; i < 20; i++) {
            Thread t = Thread.ofVirtual().start(() -> nlp.analyse(text));
            t.join();
        }
        assertThat(nlp.pipelinesMade())
                .as("one pipeline serves calls one after another")
                .isEqualTo(1);

        List<Future<List<EnglishNlp.Sentence>>> many = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 64; i++) {
                many.add(threads.submit(() -> nlp.analyse(text)));
            }
        }
        for (Future<List<EnglishNlp.Sentence>> f : many) {
            assertThat(f.get()).isEqualTo(alone);
        }
        assertThat(alone).hasSize(2);
    }

    /** The tokens {@link EnglishNlp#finalPeriodApart} makes of a sentence whose last token is {@code last}. */
    private static List<String> lastTokens(String sentence, String last) {
        int at = sentence.length() - last.length();
        Span[] spans = EnglishNlp.finalPeriodApart(
                sentence, new Span[] {new Span(0, at - 1), new Span(at, sentence.length())});
        List<String> out = new ArrayList<>();
        for (int i = 1; i < spans.length; i++) {
            out.add(sentence.substring(spans[i].getStart(), spans[i].getEnd()));
        }
        return out;
    }

    @Test
    void aLastWordLeavesItsPeriodUnlessAnAbbreviationInitialOrDottedWordNeedsIt() {
        assertThat(lastTokens("stored in RocksDB.", "RocksDB.")).containsExactly("RocksDB", ".");
        assertThat(lastTokens("runs KRaft v2.", "v2.")).containsExactly("v2", ".");
        assertThat(lastTokens("worked for Acme Inc.", "Inc.")).containsExactly("Inc.");
        assertThat(lastTokens("lived in the U.S.", "U.S.")).containsExactly("U.S.");
        assertThat(lastTokens("and so on, e.g.", "e.g.")).containsExactly("e.g.");
        assertThat(lastTokens("Iain M.", "M.")).containsExactly("M.");
        assertThat(lastTokens("it trailed off ...", "...")).containsExactly("...");
        assertThat(lastTokens("a quote \u201cdone\u201d.", "\u201d.")).containsExactly("\u201d.");
        assertThat(EnglishNlp.finalPeriodApart("", new Span[0])).isEmpty();
    }

    private static List<String> sentences(String text, Span... detected) {
        return EnglishNlp.joinAbbreviations(text, detected).stream()
                .map(s -> text.substring(s.getStart(), s.getEnd()))
                .toList();
    }

    @Test
    void aSentenceGoesOnAfterAnAbbreviationFollowedByANumberOrALowerCaseWord() {
        String op = "The Queen of Spades, Op. 70, is a score. It was not filmed.";
        assertThat(sentences(op, new Span(0, 24), new Span(25, 40), new Span(41, op.length())))
                .containsExactly("The Queen of Spades, Op. 70, is a score.", "It was not filmed.");
        String eg = "Some birds, e.g. crows, are clever.";
        assertThat(sentences(eg, new Span(0, 16), new Span(17, eg.length()))).containsExactly(eg);
    }

    @Test
    void aNameGoesOnAfterAMiddleInitialButASentenceEndsAfterARegnalNumeralOrBeforeAnOpener() {
        String banks = "A novel by Iain M. Banks was out. George R. R. Martin wrote. It won Plan B. The end.";
        assertThat(sentences(
                        banks,
                        new Span(0, 18),
                        new Span(19, 33),
                        new Span(34, 43),
                        new Span(44, 46),
                        new Span(47, 60),
                        new Span(61, 75),
                        new Span(76, banks.length())))
                .containsExactly(
                        "A novel by Iain M. Banks was out.",
                        "George R. R. Martin wrote.",
                        "It won Plan B.",
                        "The end.");
        String war = "He fought in World War I. Germany lost.";
        assertThat(sentences(war, new Span(0, 25), new Span(26, war.length())))
                .containsExactly("He fought in World War I.", "Germany lost.");
    }

    @Test
    void aNameGoesOnAfterATitleOrPlacePrefix() {
        String stl = "It was held in St. Louis in 1904. Dr. Watson came. He left at No. Ten was next.";
        assertThat(sentences(
                        stl,
                        new Span(0, 18),
                        new Span(19, 33),
                        new Span(34, 37),
                        new Span(38, 50),
                        new Span(51, 65),
                        new Span(66, stl.length())))
                .as("a capital after \"St.\" or \"Dr.\" is the name; after \"No.\" it may start a sentence")
                .containsExactly(
                        "It was held in St. Louis in 1904.", "Dr. Watson came.", "He left at No.", "Ten was next.");
    }

    @Test
    void aSentenceThatEndsOnAnAbbreviationStillEnds() {
        String street = "He lived on Baker St. The house was old. It rose 8,000 ft. Then it fell.";
        assertThat(sentences(
                        street, new Span(0, 21), new Span(22, 40), new Span(41, 58), new Span(59, street.length())))
                .as("a determiner or pronoun opens the next sentence; \"ft.\" is feet, not Fort")
                .containsExactly("He lived on Baker St.", "The house was old.", "It rose 8,000 ft.", "Then it fell.");
    }

    @Test
    void anyOtherSplitStands() {
        String uk = "He lived in the UK. 2010 was his last year. the next line is lower case.";
        assertThat(sentences(uk, new Span(0, 19), new Span(20, 43), new Span(44, uk.length())))
                .as("not an abbreviation: a sentence may start with a year, and chat text in lower case")
                .containsExactly("He lived in the UK.", "2010 was his last year.", "the next line is lower case.");
        assertThat(sentences("")).isEmpty();
    }

    @Test
    void theModelsSplitIsMendedInTheAnalysis() {
        List<EnglishNlp.Sentence> s = new EnglishNlp()
                .analyse("The Queen of Spades, Op. 70, is the score composed by Prokofiev. It is short.");
        assertThat(s).hasSize(2);
        assertThat(s.get(0).tokens()).extracting(EnglishNlp.Token::text).contains("Op", "70", "score");
    }

    @Test
    void aRunTooLongToSplitStaysOneTokenAndTheWordsAroundItAreSplitAsAlways() {
        EnglishNlp nlp = new EnglishNlp();
        String blob = "x".repeat(EnglishNlp.SPLIT_AT_MOST + 1);
        String plain = "Ada's notes (1843), however, were read.";
        List<String> alone = words(nlp.analyse(plain));
        List<String> beside = words(nlp.analyse(plain.replace("were", blob + " were")));
        assertThat(beside).contains(blob);
        beside.remove(blob);
        assertThat(beside).isEqualTo(alone);
    }

    @Test
    void aSentenceOfThousandsOfWordsIsTaggedWordForWord() {
        EnglishNlp nlp = new EnglishNlp();
        String text = "Ada wrote notes and " + "tables and ".repeat(EnglishNlp.TAGGED_AT_ONCE * 3) + "letters.";
        List<EnglishNlp.Sentence> sentences = nlp.analyse(text);
        assertThat(sentences.stream().mapToInt(s -> s.tokens().size()).sum())
                .isEqualTo(5 + 2 * EnglishNlp.TAGGED_AT_ONCE * 3 + 1);
        assertThat(sentences.get(0).tokens())
                .allSatisfy(t -> assertThat(t.tag()).isNotBlank());
    }

    private static List<String> words(List<EnglishNlp.Sentence> sentences) {
        List<String> out = new ArrayList<>();
        sentences.forEach(s -> s.tokens().forEach(t -> out.add(t.text())));
        return out;
    }
}
