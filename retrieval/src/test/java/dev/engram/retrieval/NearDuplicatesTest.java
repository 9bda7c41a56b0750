package dev.engram.retrieval;

import static dev.engram.retrieval.TestVectors.unit;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A passage that mostly repeats the words of one ranked above it waits below the other candidates. */
class NearDuplicatesTest {

    private static final String PLAIN = "Configure the JAAS configuration property for each client in producer"
            + " properties or consumer properties. The login module describes how clients like producer and consumer"
            + " connect to the broker with the PLAIN mechanism.";
    private static final String SCRAM = "Configure the JAAS configuration property for each client in producer"
            + " properties or consumer properties. The login module describes how clients like producer and consumer"
            + " connect to the broker with the SCRAM mechanism.";
    private static final String PROVIDER = "A config provider reads a password from an environment variable, so that"
            + " no secret is written into the properties file.";

    private static Passage passage(String id, String title, String text) {
        return new Passage(id, "d-" + id, title, List.of(), text, text, 0, text.length());
    }

    private static MemoryGraph graph() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        b.passage(passage("plain", "Configuring Kafka Clients", PLAIN), unit(1, 0, 0));
        b.passage(passage("scram", "Configuring Kafka Clients", SCRAM), unit(1, 0.1f, 0));
        b.passage(passage("provider", "EnvVarConfigProvider", PROVIDER), unit(0, 1, 0));
        b.passage(passage("short", "", "Yes!"), unit(0, 0, 1));
        b.passage(passage("short-again", "", "yes"), unit(0, 0.3f, 1));
        return b.build();
    }

    private static List<Retrieval.Scored> ranking(int... passages) {
        return IntStream.range(0, passages.length)
                .mapToObj(i -> new Retrieval.Scored(passages[i], 1.0 / (i + 1)))
                .toList();
    }

    private static List<String> ids(MemoryGraph g, NearDuplicates.Spread s) {
        return s.ranked().stream().map(x -> g.passage(x.passage()).id()).toList();
    }

    @Test
    void aNearCopyWaitsBelowEveryOtherCandidateAndFillsTheRankingOnlyWhenNothingElseIsLeft() {
        MemoryGraph g = graph();
        List<Retrieval.Scored> ranked = ranking(0, 1, 2);

        NearDuplicates.Spread two = NearDuplicates.spread(g, ranked, 0.5, 2);
        assertThat(ids(g, two)).containsExactly("plain", "provider");
        assertThat(two.movedDown()).isEqualTo(1);
        // the moved passage keeps its score: the ranking says what the fusion gave it
        assertThat(two.ranked().get(1).score()).isEqualTo(1.0 / 3);

        // room for every candidate: the copy comes last, and it was still moved below the others
        NearDuplicates.Spread three = NearDuplicates.spread(g, ranked, 0.5, 3);
        assertThat(ids(g, three)).containsExactly("plain", "provider", "scram");
        assertThat(three.movedDown()).isEqualTo(1);
        assertThat(ids(g, NearDuplicates.spread(g, ranked, 0.5, 40))).containsExactly("plain", "provider", "scram");

        // off, or a stricter threshold than the copies' likeness: the ranking as it was, cut to topK
        assertThat(ids(g, NearDuplicates.spread(g, ranked, 0, 2))).containsExactly("plain", "scram");
        assertThat(ids(g, NearDuplicates.spread(g, ranked, 0.99, 2))).containsExactly("plain", "scram");
        assertThat(NearDuplicates.spread(g, List.of(), 0.5, 5).ranked()).isEmpty();
    }

    @Test
    void shortTextsAreCopiesOnlyWhenTheirWordsAreTheSame() {
        MemoryGraph g = graph();
        // "Yes!" and "yes" are one word as BM25 reads words: a copy
        assertThat(ids(g, NearDuplicates.spread(g, ranking(3, 4, 2), 0.5, 2))).containsExactly("short", "provider");
        assertThat(NearDuplicates.resemblance(
                        NearDuplicates.shingles("I love it"), NearDuplicates.shingles("I love that")))
                .isZero();
        // words as BM25 reads them, hashed without a string made of any
        String words = "Élan VITAL_2, naïve; x \uD835\uDC00\uD835\uDC01c İstanbul";
        assertThat(Bm25.tokenHashes(words))
                .containsExactly(
                        Bm25.tokens(words).stream().mapToInt(String::hashCode).toArray());
        assertThat(NearDuplicates.resemblance(NearDuplicates.shingles(""), NearDuplicates.shingles(null)))
                .isZero();
        assertThat(NearDuplicates.resemblance(NearDuplicates.shingles(PLAIN), NearDuplicates.shingles(PLAIN)))
                .isEqualTo(1.0);
        assertThat(NearDuplicates.resemblance(NearDuplicates.shingles(PLAIN), NearDuplicates.shingles(SCRAM)))
                .isBetween(0.8, 1.0);
    }

    @Test
    void hybridMovesNearCopiesDownByDefaultAndSaysHowMany() {
        MemoryGraph g = graph();
        Retrieval.Mode hybrid = Retrieval.mode("hybrid");
        float[] question = unit(1, 0.05f, 0);
        Retrieval.Query q = Retrieval.Query.of(
                "how do clients configure the JAAS property to connect to the broker", question, t -> question);

        // without spreading, the two copies take both places; with it, the better-ranked copy keeps its place and
        // the other waits below the provider's passage
        Retrieval.Result asIs = hybrid.retrieve(g, q, Retrieval.params(hybrid, Map.of("duplicate_words", 0.0)), 2);
        List<String> copies =
                asIs.ranked().stream().map(s -> g.passage(s.passage()).id()).toList();
        assertThat(copies).containsExactlyInAnyOrder("plain", "scram");
        Retrieval.Result spread = hybrid.retrieve(g, q, Retrieval.params(hybrid, Map.of()), 2);
        assertThat(spread.ranked())
                .extracting(s -> g.passage(s.passage()).id())
                .containsExactly(copies.get(0), "provider");
        assertThat((Integer) spread.explanation().get("near_copies_moved_down")).isPositive();
        assertThat(asIs.explanation()).doesNotContainKey("near_copies_moved_down");
    }

    @Test
    void everyGraphModeMovesNearCopiesDownWhicheverPathItTookAndTheBaselinesDoNot() {
        MemoryGraph g = graph();
        float[] question = unit(1, 0.05f, 0);
        Retrieval.Query q = Retrieval.Query.of(
                "how do clients configure the JAAS property to connect to the broker", question, t -> question);
        for (String name : List.of("fusion", "cogito", "pabd", "como", "gem")) {
            Retrieval.Mode mode = Retrieval.mode(name);
            Retrieval.Result r = mode.retrieve(g, q, Retrieval.params(mode, Map.of()), 2);
            List<String> ids =
                    r.ranked().stream().map(s -> g.passage(s.passage()).id()).toList();
            assertThat(ids).as(name).hasSize(2);
            assertThat(ids.containsAll(List.of("plain", "scram"))).as(name).isFalse();
            assertThat(r.explanation()).as(name).containsKey("near_copies_moved_down");
            Retrieval.Result off = mode.retrieve(g, q, Retrieval.params(mode, Map.of("duplicate_words", 0.0)), 2);
            assertThat(off.explanation()).as(name).doesNotContainKey("near_copies_moved_down");
            if (!List.of("como", "gem").contains(name)) {
                // the question names no entity: these three rank by meaning, where the copies come first
                assertThat(off.explanation()).as(name).containsEntry("path", "dense");
                assertThat(off.ranked())
                        .as(name)
                        .extracting(s -> g.passage(s.passage()).id())
                        .containsExactlyInAnyOrder("plain", "scram");
            }
        }
        for (String name : List.of("dense", "bm25")) {
            Retrieval.Mode mode = Retrieval.mode(name);
            assertThat(mode.defaults()).as(name).doesNotContainKey("duplicate_words");
        }
    }
}
