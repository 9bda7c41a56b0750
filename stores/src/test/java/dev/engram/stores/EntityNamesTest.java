package dev.engram.stores;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Normalized names: the one-pass form of ASCII names is exactly the general one. */
class EntityNamesTest {

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
            assertThat(EntityNames.normalize(s)).as(s).isEqualTo(EntityNames.normalizeUnicode(s));
        }
    }

    @Test
    void namesBeyondAsciiTakeTheGeneralForm() {
        assertThat(EntityNames.normalizeAscii("Gödel")).isNull();
        assertThat(EntityNames.normalize("  The Gödel–Escher, Bach ")).isEqualTo("godel escher bach");
        assertThat(EntityNames.normalize("ﬁnal")).isEqualTo("final"); // a compatibility ligature
        assertThat(EntityNames.normalize("The")).isEqualTo("the");
        assertThat(EntityNames.normalize("the  Beatles!")).isEqualTo("beatles");
        assertThat(EntityNames.normalize("An")).isEqualTo("an");
        assertThat(EntityNames.normalize("...")).isEmpty();
        // scripts newer than some regular-expression engines' tables are letters all the same
        assertThat(EntityNames.normalize("Sequoyah ᏍᏏᏉᏯ")).isEqualTo("sequoyah ꮝꮟꮙꮿ");
        assertThat(EntityNames.normalize("𞤀𞤣𞤤𞤢𞤥")).isNotEmpty();
    }
}
