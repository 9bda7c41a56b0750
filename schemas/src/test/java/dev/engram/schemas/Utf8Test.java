package dev.engram.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Text cut or quoted for a message stays text: never half a surrogate pair, an unpaired one shown escaped. */
class Utf8Test {

    private static final String FACE = "\uD83D\uDE00";

    @Test
    void anAbbreviationNeverEndsInHalfAPair() {
        assertThat(Utf8.abbreviate("short", 5, "...")).isEqualTo("short");
        assertThat(Utf8.abbreviate("abcdef", 5, "...")).isEqualTo("ab...");
        // the cut would fall between the halves of a face: the face goes whole
        assertThat(Utf8.abbreviate("a" + FACE + "bcd", 5, "...")).isEqualTo("a...");
        assertThat(Utf8.abbreviate(FACE + FACE + FACE, 5, "")).isEqualTo(FACE + FACE);
        assertThat(Utf8.abbreviate(FACE.repeat(10), 4, "...")).isEqualTo("...");
        for (int max = 3; max < 30; max++) {
            assertThat(Utf8.encodable(Utf8.abbreviate(("x" + FACE).repeat(10), max, "…")))
                    .isTrue();
        }
    }

    @Test
    void unpairedSurrogatesAreShownAsTheirEscapes() {
        assertThat(Utf8.escapeUnpaired("plain " + FACE)).isEqualTo("plain " + FACE);
        assertThat(Utf8.escapeUnpaired("a\uD800b\uDC00")).isEqualTo("a\\uD800b\\uDC00");
        assertThat(Utf8.escapeUnpaired("\uDC00" + FACE + "\uD83D")).isEqualTo("\\uDC00" + FACE + "\\uD83D");
        assertThat(Utf8.encodable(Utf8.escapeUnpaired("x\uD800"))).isTrue();
    }
}
