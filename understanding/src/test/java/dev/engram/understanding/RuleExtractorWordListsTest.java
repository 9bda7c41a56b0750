package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The rule extractor's word lists, now resource files, hold exactly what the code held when they were inline
 * constants; a change here is a change to what {@code embedded-rules} extracts.
 */
class RuleExtractorWordListsTest {

    @Test
    void connectorsAreUnchanged() {
        assertThat(RuleExtractor.CONNECTORS)
                .isEqualTo(Set.of(
                        "of", "the", "de", "del", "della", "der", "van", "von", "da", "di", "du", "la", "le", "y",
                        "&"));
    }

    @Test
    void honorificsAreUnchanged() {
        assertThat(RuleExtractor.HONORIFICS)
                .isEqualTo(Set.of(
                        "mr",
                        "mrs",
                        "ms",
                        "dr",
                        "sir",
                        "dame",
                        "lady",
                        "lord",
                        "king",
                        "queen",
                        "prince",
                        "princess",
                        "president",
                        "saint",
                        "pope",
                        "general",
                        "captain",
                        "professor",
                        "prof",
                        "emperor",
                        "empress",
                        "duke",
                        "duchess",
                        "count",
                        "countess",
                        "bishop",
                        "archbishop",
                        "senator",
                        "governor",
                        "judge",
                        "colonel",
                        "admiral"));
    }

    @Test
    void workNounsAreUnchanged() {
        assertThat(RuleExtractor.WORK_NOUNS)
                .isEqualTo(Set.of(
                        "film",
                        "movie",
                        "album",
                        "song",
                        "single",
                        "novel",
                        "book",
                        "series",
                        "play",
                        "opera",
                        "poem",
                        "painting",
                        "documentary",
                        "sitcom",
                        "show",
                        "game",
                        "episode",
                        "ep",
                        "soundtrack",
                        "magazine",
                        "newspaper",
                        "comic",
                        "musical",
                        "ballet",
                        "symphony",
                        "short",
                        "drama",
                        "comedy",
                        "thriller",
                        "anthology"));
    }

    @Test
    void smallListsAreUnchanged() {
        assertThat(RuleExtractor.PERSON_PRONOUNS).isEqualTo(Set.of("he", "she", "him", "his", "her", "hers"));
        assertThat(RuleExtractor.PERSON_VERBS).isEqualTo(Set.of("born", "died", "married", "educated", "raised"));
        assertThat(RuleExtractor.TRAILING_PREPOSITIONS)
                .isEqualTo(Set.of("in", "on", "at", "of", "for", "by", "to", "from", "with"));
        assertThat(RuleExtractor.LEADING_AUXILIARIES)
                .isEqualTo(Set.of("was", "were", "is", "are", "has been", "had been"));
    }

    @Test
    void largeListsKeepTheirSizeAndMembers() {
        assertThat(RuleExtractor.ORGANIZATION_WORDS)
                .hasSize(53)
                .contains(
                        "university",
                        "inc",
                        "fc",
                        "records",
                        "band",
                        "organization",
                        "organisation",
                        "brigade",
                        "administration",
                        "fund");
        assertThat(RuleExtractor.PLACE_WORDS)
                .hasSize(39)
                .contains("city", "river", "mount", "islands", "park", "castle", "municipality", "canal")
                .doesNotContain("country", "capital"); // those two are checked in code
        assertThat(RuleExtractor.PERSON_NOUNS)
                .hasSize(106)
                .contains("actor", "mathematician", "footballer", "noblewoman", "man", "child", "mayor", "member");
    }

    @Test
    void everyEntryIsLowerCaseAndStrippedBecauseTokensAreMatchedLowerCased() {
        Map<String, Set<String>> lists = Map.of(
                "connectors", RuleExtractor.CONNECTORS,
                "honorifics", RuleExtractor.HONORIFICS,
                "organization-words", RuleExtractor.ORGANIZATION_WORDS,
                "place-words", RuleExtractor.PLACE_WORDS,
                "person-nouns", RuleExtractor.PERSON_NOUNS,
                "work-nouns", RuleExtractor.WORK_NOUNS,
                "person-pronouns", RuleExtractor.PERSON_PRONOUNS,
                "person-verbs", RuleExtractor.PERSON_VERBS,
                "trailing-prepositions", RuleExtractor.TRAILING_PREPOSITIONS,
                "leading-auxiliaries", RuleExtractor.LEADING_AUXILIARIES);
        lists.forEach((name, words) -> {
            assertThat(words).as(name).isEqualTo(WordLists.load(name));
            for (String w : words) {
                assertThat(w).as(name).isEqualTo(w.toLowerCase(Locale.ROOT).strip());
            }
        });
    }

    /**
     * The id is part of the extraction cache's key: it changes with what the rules extract (3: descriptions past
     * asides and quotes, the first description in text order; 4: with the years of the subject's asides; 5: with the
     * qualifier of a title, years without class noun, possessives off names, sentences kept whole after an
     * abbreviation; 9: a title inside a name, a possessive or slash between two names, "X, Y" a place only after a
     * preposition of place; 10: middle initials, quotes with loose spacing, glued possessives after generations and
     * acronyms, styles of peers; 11: a conversation's speaker and addressee, times relative to the day of writing; 12: a participant's short name joins them; 13: technical names are no places, a sentence's last word leaves its period;
     * 14: a dotted initialism is no person), so
     * no extraction of older rules is reused.
     */
    @Test
    void theExtractorIdNamesTheRulesVersion() {
        assertThat(RuleExtractor.ID).isEqualTo("embedded-rules/14");
    }
}
