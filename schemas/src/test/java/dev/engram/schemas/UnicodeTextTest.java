package dev.engram.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The folding scans do what the JDK's regular expressions they replaced did ({@code \p{M}+} removed, {@code
 * [^\p{L}\p{N}]+} made one space, {@code String.split} on it), on every script the JDK knows: store keys made before
 * and after the scans agree.
 */
class UnicodeTextTest {

    private static final Pattern MARKS = Pattern.compile("\\p{M}+");
    private static final Pattern NON_WORD = Pattern.compile("[^\\p{L}\\p{N}]+");

    @Test
    void theScansAgreeWithTheJdksExpressionsOnRandomTextOfEveryPlane() {
        Random random = new Random(11);
        int[] samples = {
            'a', 'Z', '7', ' ', '-', '.', '_', '\'', 0x0301, 0x20DD, 0x0903, 0x00C9, 0x13A3, 0xAB70, 0x1E900, 0x9FF0,
            0x1F642, 0x0660, 0x2167, 0x00B2, 0xD800, 0xDC00, 0x3000, 0x00A0
        };
        for (int round = 0; round < 50_000; round++) {
            StringBuilder b = new StringBuilder();
            int length = random.nextInt(12);
            for (int i = 0; i < length; i++) {
                b.appendCodePoint(
                        random.nextInt(4) == 0 ? random.nextInt(0x30000) : samples[random.nextInt(samples.length)]);
            }
            String text = b.toString();
            assertThat(UnicodeText.withoutMarks(text))
                    .isEqualTo(MARKS.matcher(text).replaceAll(""));
            assertThat(UnicodeText.spacedWords(text))
                    .isEqualTo(NON_WORD.matcher(text).replaceAll(" "));
            assertThat(UnicodeText.words(text)).isEqualTo(List.of(NON_WORD.split(text)));
        }
    }

    @Test
    void lettersOfRecentScriptsAreLetters() {
        assertThat(UnicodeText.spacedWords("ᏣᎳᎩ ꮳꮃꭹ 𞤀𞤣𞤤𞤢𞤥 鿰鿱")).isEqualTo("ᏣᎳᎩ ꮳꮃꭹ 𞤀𞤣𞤤𞤢𞤥 鿰鿱");
    }
}
