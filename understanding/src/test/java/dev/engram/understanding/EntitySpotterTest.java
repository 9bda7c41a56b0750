package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.EntityMention;
import dev.engram.schemas.EntityType;
import java.util.List;
import org.junit.jupiter.api.Test;

class EntitySpotterTest {

    private final EntitySpotter spotter = new EntitySpotter();

    private List<String> names(String text) {
        return spotter.spot(text).stream().map(EntityMention::name).toList();
    }

    @Test
    void findsProperNounRunsWithOfJoins() {
        assertThat(names("Babbage held a chair at the University of Cambridge until 1839."))
                .containsExactly("Babbage", "University of Cambridge", "1839");
    }

    @Test
    void skipsCapitalizedFunctionWordsAtSentenceStart() {
        assertThat(names("The engine was never built. In London, Ada Lovelace wrote notes."))
                .containsExactly("London", "Ada Lovelace");
    }

    @Test
    void evidenceSpansPointAtTheMention() {
        String text = "Later, Grace Hopper joined the United States Navy in December 1943.";

        for (EntityMention m : spotter.spot(text)) {
            assertThat(text.substring(m.start(), m.end())).isEqualTo(m.name());
        }
        assertThat(spotter.spot(text))
                .extracting(EntityMention::name, EntityMention::type)
                .contains(
                        org.assertj.core.groups.Tuple.tuple("Grace Hopper", EntityType.OTHER),
                        org.assertj.core.groups.Tuple.tuple("December 1943", EntityType.DATE));
    }

    @Test
    void typesByCues() {
        assertThat(spotter.spot("She studied at Harvard University and sailed on the Hudson River."))
                .extracting(EntityMention::name, EntityMention::type)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("Harvard University", EntityType.ORGANIZATION),
                        org.assertj.core.groups.Tuple.tuple("Hudson River", EntityType.PLACE));
    }

    @Test
    void findsQuotedTitles() {
        assertThat(spotter.spot("He wrote \"On Computable Numbers\" in 1936."))
                .extracting(EntityMention::name, EntityMention::type)
                .contains(org.assertj.core.groups.Tuple.tuple("On Computable Numbers", EntityType.WORK));
    }

    @Test
    void findsNothingInLowercaseText() {
        assertThat(spotter.spot("nothing here is a name, not even this.")).isEmpty();
    }
}
