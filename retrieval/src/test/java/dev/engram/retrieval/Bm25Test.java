package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class Bm25Test {

    /** The definition the hand-written tokenizer must match. */
    private static List<String> byRegex(String text) {
        Matcher m = Pattern.compile("[\\p{L}\\p{N}_]+").matcher(text.toLowerCase(Locale.ROOT));
        List<String> out = new ArrayList<>();
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    @Test
    void tokensAreLowercaseRunsOfLettersDigitsAndUnderscores() {
        assertThat(Bm25.tokens("Zürich's naïve O'Brien paid £3.14 for snake_case, Ⅻ² 東京 İstanbul 🙂x"))
                .isEqualTo(byRegex("Zürich's naïve O'Brien paid £3.14 for snake_case, Ⅻ² 東京 İstanbul 🙂x"))
                .contains("zürich", "naïve", "snake_case", "東京");
        assertThat(Bm25.tokens("")).isEmpty();
        assertThat(Bm25.tokens("--")).isEmpty();
        // random text over ASCII, Latin-1, combining marks, numbers of other scripts and surrogate pairs
        String alphabet = "aZ9_ -.,'\u00e9\u00df\u0301\u0660\u2163\u00b2\u4e2d\u0130\ud83d\ude42\ud835\udc00";
        Random r = new Random(5);
        for (int n = 0; n < 500; n++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 30; i++) {
                int at = r.nextInt(alphabet.length());
                char c = alphabet.charAt(at);
                sb.append(c);
                if (Character.isHighSurrogate(c) && at + 1 < alphabet.length()) {
                    sb.append(alphabet.charAt(at + 1));
                }
            }
            String text = sb.toString();
            assertThat(Bm25.tokens(text)).as(text).isEqualTo(byRegex(text));
        }
    }
}
