package dev.engram.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Normalized names: the one-pass form of ASCII names is exactly the general one. */
class NormalizedNamesTest {

    @Test
    void asciiNamesNormalizeAsTheGeneralFormDoes() {
        String[] pieces = {
            "the ", "The ", "a ", "A ", "an ", "An ", "THE", "an", "a", " ", "  ", "\t", "\n", "-", "_", ".", "'", "\"",
            "(", ")", "&", "Inc.", "St.", "O'Neil", "x", "Z", "0", "9", "42", "\u007f", "\u0001", "Babbage", "über"
        };
        Random random = new Random(7);
        for (int i = 0; i < 200_000; i++) {
            StringBuilder name = new StringBuilder();
            int n = random.nextInt(7);
            for (int j = 0; j < n; j++) {
                if (random.nextInt(4) == 0) {
                    name.append((char) random.nextInt(0x80)); // any ASCII character, control ones included
                } else {
                    name.append(pieces[random.nextInt(pieces.length)]);
                }
            }
            String s = name.toString();
            assertThat(NormalizedNames.of(s)).as(s).isEqualTo(NormalizedNames.unicode(s));
        }
    }

    @Test
    void namesBeyondAsciiTakeTheGeneralForm() {
        assertThat(NormalizedNames.ascii("Gödel")).isNull();
        assertThat(NormalizedNames.of("  The Gödel–Escher, Bach ")).isEqualTo("godel escher bach");
        assertThat(NormalizedNames.of("ﬁnal")).isEqualTo("final"); // a compatibility ligature
        assertThat(NormalizedNames.of("The")).isEqualTo("the");
        assertThat(NormalizedNames.of("the  Beatles!")).isEqualTo("beatles");
        assertThat(NormalizedNames.of("An")).isEqualTo("an");
        assertThat(NormalizedNames.of("...")).isEmpty();
        // scripts newer than some regular-expression engines' tables are letters all the same
        assertThat(NormalizedNames.of("Sequoyah ᏍᏏᏉᏯ")).isEqualTo("sequoyah ꮝꮟꮙꮿ");
        assertThat(NormalizedNames.of("𞤀𞤣𞤤𞤢𞤥")).isNotEmpty();
    }
}
