package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.engram.schemas.Conversation;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A conversation's turn: its speaker and addressee are persons, its relative times are dates. */
class ConversationExtractionTest {

    private static RuleExtractor extractor;

    private static final Instant MONDAY = Instant.parse("2023-05-08T13:56:00Z");

    @BeforeAll
    static void load() {
        extractor = new RuleExtractor(new EnglishNlp(), 3);
    }

    private static Extraction turn(String speaker, List<String> participants, Instant at, String text) {
        Conversation c = speaker == null ? null : new Conversation(speaker, participants, "1");
        return extractor.extract(
                new PassageEvent.Upsert("ns", "d", 1, "0", 0, "h", "", List.of(), text, 0, text.length(), null, at, c));
    }

    @Test
    void theSpeakerIsAPersonAndTheFirstPersonIsThem() {
        Extraction x = turn(
                "Caroline",
                List.of("Caroline", "Melanie"),
                MONDAY,
                "I went to the Pride Center yesterday and I'm still thinking about it.");

        assertThat(x.entities())
                .extracting(Extraction.Entity::name, Extraction.Entity::type)
                .contains(tuple("Caroline", EntityType.PERSON), tuple("7 May 2023", EntityType.DATE));
        assertThat(x.entities()).extracting(Extraction.Entity::name).doesNotContain("Melanie", "I");
        assertThat(x.memory())
                .isEqualTo("Caroline went to the Pride Center yesterday (7 May 2023) and Caroline is still thinking"
                        + " about it.");
        assertThat(x.facts())
                .extracting(Extraction.Fact::head, Extraction.Fact::relation, Extraction.Fact::tail)
                .contains(tuple("Caroline", "went to", "Pride Center"), tuple("Caroline", "went on", "7 May 2023"));
        Extraction.Entity date = x.entities().stream()
                .filter(e -> e.name().equals("7 May 2023"))
                .findFirst()
                .orElseThrow();
        assertThat(date.aliases())
                .as("'yesterday' names another day in every turn")
                .isEmpty();
    }

    @Test
    void theSecondPersonIsTheOtherOfTwo() {
        Extraction x = turn(
                "Melanie", List.of("Caroline", "Melanie"), MONDAY, "You're so brave! Your story about Paris moved me.");

        assertThat(x.entities())
                .extracting(Extraction.Entity::name, Extraction.Entity::type)
                .contains(tuple("Caroline", EntityType.PERSON), tuple("Melanie", EntityType.PERSON));
        assertThat(x.memory()).isEqualTo("Caroline is so brave! Caroline's story about Paris moved Melanie.");
    }

    @Test
    void onlyASubjectTakesTheVerbOfItsName() {
        List<String> two = List.of("Caroline", "Melanie");
        assertThat(turn("Caroline", two, MONDAY, "Do you have a dog?").memory()).isEqualTo("Do Melanie have a dog?");
        assertThat(turn("Caroline", two, MONDAY, "Can you help me do this?").memory())
                .isEqualTo("Can Melanie help Caroline do this?");
        assertThat(turn("Caroline", two, MONDAY, "You have a dog and I have a cat.")
                        .memory())
                .isEqualTo("Melanie has a dog and Caroline has a cat.");
        assertThat(turn("Caroline", two, MONDAY, "I'd been there.").memory()).isEqualTo("Caroline'd been there.");
    }

    @Test
    void withThreeParticipantsYouIsNobodyInParticular() {
        Extraction x = turn("Ann", List.of("Ann", "Bob", "Cy"), MONDAY, "Did you see the game?");

        assertThat(x.entities()).extracting(Extraction.Entity::name).containsExactly("Ann");
        assertThat(x.memory()).isEqualTo("Did you see the game?");
    }

    @Test
    void aGreetingIsNotPartOfTheNameItGreets() {
        Extraction x = turn("Gina", List.of("Gina", "Jon"), MONDAY, "Hey Jon! Thanks Mel for the tip. Hello Dallas!");

        assertThat(x.entities()).extracting(Extraction.Entity::name).contains("Jon", "Mel", "Dallas");
        assertThat(x.entities())
                .extracting(Extraction.Entity::name)
                .noneMatch(n -> n.startsWith("Hey") || n.startsWith("Thanks") || n.startsWith("Hello"));
    }

    @Test
    void aTurnThatNamesItsSpeakerHasOneEntityForThem() {
        Extraction x = turn("Caroline", List.of("Caroline", "Melanie"), MONDAY, "Caroline: I love painting.");

        assertThat(x.entities().stream().filter(e -> e.name().equals("Caroline")))
                .singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo(EntityType.PERSON));
    }

    @Test
    void codeIsNotMinedForNamesAsProseIs() {
        String text =
                "Kafka Streams writes to RocksDB on disk.\n\n```java\nNew York Times = Apache Lucene.open();\n```";
        Extraction x = turn(null, List.of(), null, text);

        assertThat(x.entities()).extracting(Extraction.Entity::name).contains("Kafka Streams", "RocksDB");
        assertThat(x.entities()).extracting(Extraction.Entity::name).doesNotContain("New York Times", "Apache Lucene");
        assertThat(x.memory()).isEqualTo(text);
    }

    @Test
    void aTurnIsEmbeddedAfterItsSpeakerOnce() {
        Conversation c = new Conversation("Caroline", List.of("Caroline", "Melanie"), null);
        PassageEvent.Upsert bare = new PassageEvent.Upsert(
                "ns", "d", 1, "0", 0, "h", "", List.of(), "I love painting.", 0, 16, null, MONDAY, c);
        PassageEvent.Upsert prefixed = new PassageEvent.Upsert(
                "ns", "d", 1, "0", 0, "h", "", List.of(), "Caroline: I love painting.", 0, 26, null, MONDAY, c);

        assertThat(Understander.embeddingText(bare)).isEqualTo("Caroline: I love painting.");
        assertThat(Understander.embeddingText(prefixed)).isEqualTo("Caroline: I love painting.");
    }

    @Test
    void aParticipantsShortNameNamesThem() {
        List<String> two = List.of("Caroline", "Melanie");
        Extraction hey = turn("Caroline", two, MONDAY, "Hey Mel! How was the concert?");
        assertThat(hey.entities())
                .extracting(Extraction.Entity::name, Extraction.Entity::type)
                .containsExactly(tuple("Caroline", EntityType.PERSON), tuple("Melanie", EntityType.PERSON));
        Extraction.Entity melanie = hey.entities().get(1);
        assertThat(melanie.aliases()).containsExactly("Mel");
        assertThat(melanie.spans()).hasSize(1);
        assertThat(turn("Melanie", two, MONDAY, "Caro, that is great news.").entities())
                .extracting(Extraction.Entity::name)
                .containsExactly("Melanie", "Caroline");

        assertThat(turn("Caroline", two, MONDAY, "Car shows are fun.").entities())
                .as("the first word of a sentence, not set off: no name")
                .extracting(Extraction.Entity::name)
                .doesNotContain("Melanie");
        assertThat(turn("Jon", List.of("Jon", "Joanna", "Joan"), MONDAY, "Thanks, Joa!")
                        .entities())
                .as("the short form of two participants names neither")
                .extracting(Extraction.Entity::name)
                .contains("Joa")
                .doesNotContain("Joanna", "Joan");
        assertThat(turn("Caroline", two, MONDAY, "I met Mel Gibson.").entities())
                .as("a longer name is no short form")
                .extracting(Extraction.Entity::name)
                .contains("Mel Gibson")
                .doesNotContain("Melanie");
    }

    @Test
    void withoutASpeakerOrATimeNothingIsAssumed() {
        Extraction plain = turn(null, List.of(), null, "I went there yesterday.");

        assertThat(plain.entities()).isEmpty();
        assertThat(plain.memory()).isEqualTo("I went there yesterday.");
    }
}
