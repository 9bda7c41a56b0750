package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WordListsTest {

    private static final String FIXTURES = "/dev/engram/understanding/wordlists/";

    @Test
    void skipsCommentsAndBlankLinesAndStripsEntries() {
        Set<String> words = WordLists.read(FIXTURES + "sample.txt");

        assertThat(words).containsExactlyInAnyOrder("alpha", "Beta", "has been", "Procter & Gamble", "ü-umlaut");
    }

    @Test
    void keepsCaseAndInnerSpacesOfMultiWordEntries() throws Exception {
        Set<String> words = WordLists.parse("inline", new StringReader("New  York\nnew york\n"));

        assertThat(words).containsExactlyInAnyOrder("New  York", "new york");
    }

    @Test
    void readsCrlfLineEndsAndIgnoresAByteOrderMark() throws Exception {
        Set<String> words = WordLists.parse("inline", new StringReader("\uFEFFfirst\r\n# note\r\n\r\nsecond\r\n"));

        assertThat(words).containsExactlyInAnyOrder("first", "second");
    }

    @Test
    void onlyWholeLineCommentsAreComments() throws Exception {
        Set<String> words = WordLists.parse("inline", new StringReader("#skipped\n   # skipped too\nC# language\n&\n"));

        assertThat(words).containsExactlyInAnyOrder("C# language", "&");
    }

    @Test
    void returnsAnImmutableSet() {
        Set<String> words = WordLists.read(FIXTURES + "sample.txt");

        assertThatThrownBy(() -> words.add("gamma")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void aMissingResourceFailsNamingIt() {
        assertThatThrownBy(() -> WordLists.load("no-such-list"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("/dev/engram/understanding/rules/no-such-list.txt")
                .hasMessageContaining("missing");
    }

    @Test
    void aDuplicateEntryFailsNamingTheLine() {
        assertThatThrownBy(() -> WordLists.read(FIXTURES + "duplicate.txt"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("duplicate.txt")
                .hasMessageContaining("'one'")
                .hasMessageContaining("line 3");
    }

    @Test
    void aListWithoutEntriesFails() {
        assertThatThrownBy(() -> WordLists.read(FIXTURES + "empty.txt"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("empty.txt")
                .hasMessageContaining("no entries");
    }

    @Test
    void loadResolvesNamesInTheRulesFolder() {
        assertThat(WordLists.load("person-verbs")).isEqualTo(WordLists.read(WordLists.RULES + "person-verbs.txt"));
    }
}
