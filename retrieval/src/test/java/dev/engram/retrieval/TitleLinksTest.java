package dev.engram.retrieval;

import static dev.engram.retrieval.TestVectors.unit;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A passage that names another document's title links to that document's passages. */
class TitleLinksTest {

    private static Passage passage(String id, String doc, String title, String text) {
        return new Passage(id, doc, title, List.of(), text, text, 0, text.length());
    }

    private static List<String> ids(MemoryGraph g, List<Integer> passages) {
        return passages.stream().map(p -> g.passage(p).id()).toList();
    }

    @Test
    void aPassageLinksToTheDocumentsWhoseTitlesItNamesInAnyCaseAndNotToItsOwn() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int rankin = b.passage(
                passage(
                        "rankin",
                        "d-rankin",
                        "George Rankin",
                        "George Rankin was an Australian soldier and politician of the Country Party (Australia)."),
                unit(1, 0, 0));
        int politician = b.passage(
                passage("politician", "d-pol", "Politician", "A politician takes part in policy-making."),
                unit(0, 1, 0));
        int politician2 = b.passage(
                passage("politician-2", "d-pol", "Politician", "Politicians face many challenges."), unit(0, 1, 1));
        int party = b.passage(
                passage("party", "d-party", "The Country Party", "The Country Party was a party."), unit(0, 0, 1));
        int town = b.passage(passage("rottweil", "d-rw", "Rottweil (town)", "A town."), unit(1, 1, 0));
        int other = b.passage(passage("other", "d-other", "Senate", "An upper house."), unit(1, 0, 1));
        MemoryGraph g = b.build();

        // "politician" in lower case names both passages of the page titled "Politician"; "Country Party" names "The
        // Country Party" (a leading article is no part of a name); its own title and "Senate" (not named) link nowhere
        assertThat(g.titleLinks.linked(g, new int[] {rankin}))
                .containsExactlyInAnyOrder(politician, politician2, party)
                .doesNotContain(rankin, other, town);
        // a title's aside is no part of it
        MemoryGraphBuilder b2 = MemoryGraph.builder(2);
        int from = b2.passage(passage("x", "d-x", "", "Born in Rottweil, he moved."), unit(1, 0, 0));
        int rw = b2.passage(passage("rw", "d-rw", "Rottweil (town)", "A town."), unit(0, 1, 0));
        // diacritics are no part of a name either way: "Zürich" names "Zurich", "Malmo" names "Malmö"
        int zurich = b2.passage(passage("zu", "d-zu", "Zurich", "A city."), unit(0, 0, 1));
        int malmo = b2.passage(passage("ma", "d-ma", "Malmö", "Another city."), unit(1, 1, 0));
        int swiss = b2.passage(passage("sw", "d-sw", "", "He taught in Zürich, then in Malmo."), unit(1, 0, 1));
        MemoryGraph g2 = b2.build();
        assertThat(g2.titleLinks.linked(g2, new int[] {from})).containsExactly(rw);
        assertThat(g2.titleLinks.linked(g2, new int[] {swiss})).containsExactly(zurich, malmo);
        // nothing to read from, or no titled passages: no links
        assertThat(g.titleLinks.linked(g, new int[0])).isEmpty();
        assertThat(new TitleLinks(List.of()).linked(g, new int[] {rankin})).isEmpty();
    }

    @Test
    void untitledNumericAndVeryLongTitlesLinkNowhere() {
        assertThat(TitleLinks.keyOf(null)).isZero();
        assertThat(TitleLinks.keyOf("")).isZero();
        assertThat(TitleLinks.keyOf("2023")).isZero();
        assertThat(TitleLinks.keyOf("O.K.")).isZero(); // "o k": under three characters
        assertThat(TitleLinks.keyOf("Caroline, 1:56 pm on 8 May, 2023")).isNotZero(); // a turn's, which no text repeats
        assertThat(TitleLinks.keyOf("one two three four five six seven eight nine"))
                .isZero();
        assertThat(TitleLinks.keyOf("Politician")).isNotZero().isEqualTo(TitleLinks.keyOf("POLITICIAN"));
        assertThat(TitleLinks.keyOf("Rottweil (town)")).isEqualTo(TitleLinks.keyOf("Rottweil"));
        assertThat(TitleLinks.keyOf("Gödel")).isEqualTo(TitleLinks.keyOf("Godel"));
    }

    @Test
    void aTitleEveryWordOfWhichIsInMostPassagesIsAHubNotALink() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int a = b.passage(passage("a", "d-a", "", "Kafka stores the records of a topic."), unit(1, 0, 0));
        for (int i = 0; i < 4; i++) {
            b.passage(passage("b" + i, "d-b" + i, "", "Kafka replicates the partitions " + i + "."), unit(0, 1, 0));
        }
        int kafka = b.passage(passage("k", "d-k", "Kafka", "Kafka is a log."), unit(0, 0, 1));
        int the = b.passage(passage("t", "d-t", "The", "The is an article."), unit(1, 1, 0));
        int topic = b.passage(passage("topic", "d-topic", "Topic", "A topic is a log of records."), unit(1, 0, 1));
        // a title's words are counted as the BM25 index reads them, accents and all
        int fur = b.passage(passage("fur", "d-fur", "Für", "Für ist ein Wort."), unit(0, 1, 1));
        int ab = b.passage(passage("ab", "d-ab", "", "Kafka für the records, für alle."), unit(0, 1, 1));
        for (int i = 0; i < 8; i++) {
            b.passage(passage("c" + i, "d-c" + i, "", "Kafka für the log " + i + "."), unit(0, 1, 0));
        }
        MemoryGraph g = b.build();
        assertThat(g.titleLinks.linked(g, new int[] {ab})).doesNotContain(fur, kafka, the);
        // "kafka" and "the" are in more than half of the other passages; "topic" in one
        assertThat(g.titleLinks.linked(g, new int[] {a})).containsExactly(topic).doesNotContain(kafka, the);
    }

    @Test
    void aLongDocumentAddsAtMostItsShareOfCandidates() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int from =
                b.passage(passage("from", "d-from", "", "See the security guide and the quickstart."), unit(1, 0, 0));
        for (int i = 0; i < 80; i++) {
            b.passage(passage("s" + i, "d-sec", "Security guide", "Part " + i + "."), unit(0, 1, 0));
        }
        int quick = b.passage(passage("q", "d-q", "Quickstart", "Start here."), unit(0, 0, 1));
        MemoryGraph g = b.build();
        List<Integer> linked = g.titleLinks.linked(g, new int[] {from});
        assertThat(linked).hasSize(TitleLinks.MOST_PER_TITLE + 1).contains(quick);
        // ranked by meaning: the question about starting finds the quickstart first
        assertThat(ids(
                        g,
                        TitleLinks.byMeaning(g, unit(0, 0, 1), linked).stream()
                                .map(Retrieval.Scored::passage)
                                .toList()))
                .first()
                .isEqualTo("q");
    }

    @Test
    void hybridFusesTheLinksAsAStreamAndPlacesTheBestWhenAskedTo() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        float[] question = unit(1, 0.2f, 0);
        b.passage(
                passage("rankin", "d-rankin", "George Rankin", "George Rankin was a soldier and politician."),
                unit(1, 0, 0));
        for (int i = 0; i < 6; i++) {
            b.passage(
                    passage("n" + i, "d-n" + i, "Rankin " + i, "Another Rankin, number " + i + "."),
                    unit(1, 0.1f * i, 0.5f));
        }
        b.passage(passage("politician", "d-pol", "Politician", "A person in policy-making."), unit(0, 1, 0));
        MemoryGraph g = b.build();
        Retrieval.Mode m = Retrieval.mode("hybrid");
        Retrieval.Query q = Retrieval.Query.of("What is George Rankin's occupation?", question, t -> question);

        Retrieval.Result off = m.retrieve(g, q, Retrieval.params(m, Map.of("w_links", 0.0)), 5);
        Retrieval.Result placed = m.retrieve(g, q, Retrieval.params(m, Map.of("w_links", 0.0, "links_page", 2.0)), 5);
        Retrieval.Result fused = m.retrieve(g, q, Retrieval.params(m, Map.of()), 5);

        assertThat(off.explanation()).doesNotContainKey("links");
        // placing alone adds no stream: the fusion reaches as many passages as with the links off
        assertThat(placed.explanation().get("fused_candidates"))
                .isEqualTo(off.explanation().get("fused_candidates"));
        assertThat(placed.explanation().get("links")).isEqualTo(List.of("Politician"));
        assertThat(fused.explanation().get("links")).isEqualTo(List.of("Politician"));
        assertThat(ids(
                                g,
                                placed.ranked().stream()
                                        .map(Retrieval.Scored::passage)
                                        .toList())
                        .indexOf("politician"))
                .isBetween(0, 1);
        assertThat(placed.ranked()).hasSize(5);
        // the default fuses the link stream: the page reached only by the link ranks among the five
        assertThat(rank(g, off, "politician")).isEqualTo(-1);
        assertThat(rank(g, fused, "politician")).isBetween(0, 4);
    }

    private static int rank(MemoryGraph g, Retrieval.Result r, String id) {
        return ids(g, r.ranked().stream().map(Retrieval.Scored::passage).toList())
                .indexOf(id);
    }
}
