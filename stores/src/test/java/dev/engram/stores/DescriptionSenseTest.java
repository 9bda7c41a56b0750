package dev.engram.stores;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import java.util.List;
import org.junit.jupiter.api.Test;

class DescriptionSenseTest {

    @Test
    void aDescriptionIsReadAsHeadNounYearsAndTheQualifiersBeforeTheHead() {
        DescriptionSense s = DescriptionSense.of("2017 British drama film directed by Adam Morgan");

        assertThat(s.head()).isEqualTo("film");
        assertThat(s.years()).containsExactly("2017");
        assertThat(s.qualifiers()).as("not Adam Morgan: after the head").containsExactly("british");
        assertThat(DescriptionSense.of("Scottish former footballer who played for Hibernian")
                        .head())
                .isEqualTo("footballer");
    }

    @Test
    void noDescriptionOrOneThatSaysNothingIsTheBareName() {
        assertThat(DescriptionSense.of(null).isNone()).isTrue();
        assertThat(DescriptionSense.of("  ").isNone()).isTrue();
        assertThat(DescriptionSense.of("— ,").isNone()).isTrue();
        assertThat(DescriptionSense.of("").key()).isEmpty();
    }

    @Test
    void conflictsNeedDisjointYearsDisjointQualifiersOrUnrelatedHeadsThatDoNotEmbedAlike() {
        DescriptionSense film1948 = DescriptionSense.of("1948 film noir");
        DescriptionSense film1971 = DescriptionSense.of("1971 British crime film");
        assertThat(film1948.conflict(film1971, () -> true)).startsWith("different years");

        DescriptionSense scottish = DescriptionSense.of("Scottish footballer");
        DescriptionSense english = DescriptionSense.of("English footballer");
        assertThat(scottish.conflict(english, () -> true)).startsWith("different qualifiers");

        DescriptionSense poet = DescriptionSense.of("poet");
        DescriptionSense physicist = DescriptionSense.of("physicist");
        assertThat(poet.conflict(physicist, () -> false)).isEqualTo("different kinds: poet / physicist");
        assertThat(poet.conflict(physicist, () -> true))
                .as("descriptions that embed alike")
                .isNull();

        DescriptionSense actor = DescriptionSense.of("American actor");
        assertThat(actor.conflict(DescriptionSense.of("actor and director"), () -> false))
                .as("one head among the other's words")
                .isNull();
        assertThat(actor.conflict(DescriptionSense.NONE, () -> false)).isNull();
        assertThat(film1948.conflict(film1971, () -> true))
                .isEqualTo(film1971.conflict(film1948, () -> true).replace("1971 / 1948", "1948 / 1971"));
    }

    @Test
    void aPassagesMentionsOfOneNameAreOneSurfaceDescribedByTheFirstDescription() {
        List<Extraction.Entity> mentions = List.of(
                new Extraction.Entity("Richard Wright", EntityType.PERSON, "", List.of(), List.of()),
                new Extraction.Entity("London", EntityType.PLACE, "", List.of(), List.of()),
                new Extraction.Entity("RICHARD WRIGHT", EntityType.PERSON, "English footballer", List.of(), List.of()),
                new Extraction.Entity("...", EntityType.OTHER, "", List.of(), List.of()));

        List<String> ids = EntityNames.surfaceIds("ns", mentions);

        String footballer = EntityNames.surfaceId("ns", "Richard Wright", EntityType.PERSON, "English footballer");
        assertThat(ids)
                .containsExactly(footballer, EntityNames.surfaceId("ns", "London", EntityType.PLACE), footballer, null);
        assertThat(footballer)
                .isNotEqualTo(EntityNames.surfaceId("ns", "Richard Wright", EntityType.PERSON))
                .isNotEqualTo(EntityNames.surfaceId("ns", "Richard Wright", EntityType.PERSON, "American author"))
                .as("another wording of one sense is one surface")
                .isEqualTo(EntityNames.surfaceId("ns", "Richard Wright", EntityType.PERSON, "an English footballer"));
    }

    @Test
    void properWordsAfterAPrepositionOrInParenthesesAreComplementsThatTellNamesakesApart() {
        DescriptionSense demotte = DescriptionSense.of("private Christian high school in DeMotte, Indiana");
        assertThat(demotte.head()).isEqualTo("school");
        assertThat(demotte.qualifiers()).containsExactly("christian");
        assertThat(demotte.complements()).containsExactly("in:demotte", "in:indiana");
        DescriptionSense indianapolis = DescriptionSense.of("private Christian high school in Indianapolis");
        assertThat(demotte.conflict(indianapolis, () -> true))
                .isEqualTo("different places or makers: in:demotte" + " in:indiana / in:indianapolis");
        assertThat(demotte.conflict(DescriptionSense.of("school in Indiana"), () -> true))
                .as("a complement in common")
                .isNull();
        assertThat(demotte.conflict(DescriptionSense.of("private school"), () -> true))
                .as("one side names none")
                .isNull();
        assertThat(DescriptionSense.of("city on the James River")
                        .conflict(DescriptionSense.of("city in Virginia"), () -> true))
                .as("complements after different prepositions say different things, not contrary ones")
                .isNull();

        // a title's qualifier lands in parentheses: a slot of its own
        DescriptionSense filter = DescriptionSense.of("song (Filter song)");
        assertThat(filter.head()).as("the description's head, not the aside's").isEqualTo("song");
        assertThat(filter.complements()).containsExactly("aside:filter");
        assertThat(filter.conflict(DescriptionSense.of("song (Carly Rae Jepsen song)"), () -> true))
                .isEqualTo("different places or makers: aside:filter / aside:carly aside:jepsen aside:rae");
        assertThat(DescriptionSense.of("footballer who played for Hibernian (Hibs)")
                        .complements())
                .as("an aside after a clause still counts")
                .containsExactly("aside:hibs");
        // a title's qualifier alone: its noun is the head and its years count
        DescriptionSense film1966 = DescriptionSense.of("(1966 film)");
        assertThat(film1966.head()).isEqualTo("film");
        assertThat(film1966.years()).containsExactly("1966");
        assertThat(film1966.conflict(DescriptionSense.of("(1980 film)"), () -> true))
                .startsWith("different years");
        // a clause or a participle tells a story, and a referent can have many: its proper words are no complements
        assertThat(DescriptionSense.of("Scottish footballer who played for Hibernian")
                        .complements())
                .isEmpty();
        assertThat(DescriptionSense.of("film directed by Steven Spielberg").complements())
                .isEmpty();
        assertThat(DescriptionSense.of("English mathematician born in Maida Vale")
                        .complements())
                .isEmpty();
        assertThat(DescriptionSense.of("footballer known as Mac").complements()).isEmpty();
    }

    @Test
    void aSenseWithoutComplementsHasTheKeyItHadBeforeComplementsWereRead() {
        assertThat(DescriptionSense.of("2017 British drama film").key()).isEqualTo("film|2017|british");
        assertThat(DescriptionSense.of("consort of Sultan Mehmed II (1432–1492)")
                        .key())
                .as("complements are appended")
                .isEqualTo("consort|1432 1492||of:ii of:mehmed of:sultan");
    }

    @Test
    void differentKindsOfWorkAreDifferentReferentsWhateverTheirEmbeddingsSay() {
        DescriptionSense album = DescriptionSense.of("fourth studio album");
        assertThat(album.conflict(DescriptionSense.of("song"), () -> true))
                .isEqualTo("different kinds of work: album / song");
        assertThat(DescriptionSense.of("1910 Russian short film").conflict(DescriptionSense.of("score"), () -> true))
                .isEqualTo("different kinds of work: film / score");
        assertThat(DescriptionSense.of("debut single").conflict(DescriptionSense.of("song"), () -> true))
                .as("one kind of work")
                .isNull();
        assertThat(album.conflict(DescriptionSense.of("record"), () -> true)).isNull();
    }
}
