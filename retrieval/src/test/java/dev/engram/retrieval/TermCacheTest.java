package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TermCacheTest {

    /** Decodes a packed count into "term×count" pairs. */
    private static String pairs(byte[] c) {
        int[] terms = new int[TermCache.Counted.distinct(c)];
        int[] counts = new int[terms.length];
        assertThat(TermCache.Counted.decode(c, terms, counts)).isEqualTo(terms.length);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < terms.length; i++) {
            sb.append(terms[i]).append('×').append(counts[i]).append(' ');
        }
        return sb.toString().strip();
    }

    @Test
    void countsArePackedAndReadBackExactlyAcrossEveryWidthOfAVariableLengthNumber() {
        // ids on both sides of each seven-bit boundary (the first gap is an id), a count past one byte, the largest id
        int[] tokens = {
            0, 0, 0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455, 268_435_456, Integer.MAX_VALUE
        };
        int[] many = new int[tokens.length + 300];
        System.arraycopy(tokens, 0, many, 0, tokens.length);
        Arrays.fill(many, tokens.length, many.length, 128); // 128 occurs 301 times
        Arrays.sort(many);
        byte[] c = TermCache.Counted.pack(many, many.length);

        // what a cache holds is the bytes alone, read back from them
        assertThat(TermCache.Counted.distinct(c)).isEqualTo(10);
        assertThat(TermCache.Counted.length(c)).isEqualTo(many.length);
        assertThat(pairs(c))
                .isEqualTo("0×3 127×1 128×301 16383×1 16384×1 2097151×1 2097152×1 268435455×1 268435456×1"
                        + " 2147483647×1");
    }

    @Test
    void countsCutShortAreRefused() {
        byte[] c = TermCache.Counted.pack(new int[] {1, 1, 300}, 3);
        byte[] cut = Arrays.copyOf(c, 1);
        assertThatThrownBy(() -> TermCache.Counted.length(cut)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TermCache.Counted.distinct(new byte[0])).isInstanceOf(IllegalArgumentException.class);
        // a number longer than an int's five bytes
        byte[] endless = {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 1};
        assertThatThrownBy(() -> TermCache.Counted.distinct(endless)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anEmptyTextHasNoTerms() {
        byte[] c = TermCache.Counted.pack(new int[4], 0);
        assertThat(TermCache.Counted.distinct(c)).isZero();
        assertThat(TermCache.Counted.length(c)).isZero();
        assertThat(pairs(c)).isEmpty();
    }

    @Test
    void randomTextsReadBackAsTheirSortedRunsAndTakeFarLessThanTwoIntArrays() {
        Random r = new Random(11);
        for (int n = 0; n < 200; n++) {
            int tokens = r.nextInt(400);
            int[] ids = new int[tokens];
            for (int i = 0; i < tokens; i++) {
                ids[i] = r.nextInt(1 + r.nextInt(200_000));
            }
            Arrays.sort(ids);
            StringBuilder expected = new StringBuilder();
            int distinct = 0;
            for (int i = 0; i < tokens; ) {
                int end = i;
                while (end < tokens && ids[end] == ids[i]) {
                    end++;
                }
                expected.append(ids[i]).append('×').append(end - i).append(' ');
                distinct++;
                i = end;
            }
            byte[] c = TermCache.Counted.pack(ids, tokens);
            assertThat(pairs(c)).isEqualTo(expected.toString().strip());
            assertThat(TermCache.Counted.distinct(c)).isEqualTo(distinct);
            assertThat(TermCache.Counted.length(c)).isEqualTo(tokens);
            // at most five bytes a term and one a count below 128, against eight bytes a term in two int arrays
            assertThat(TermCache.Counted.bytes(c)).isLessThanOrEqualTo(16 + 10 + 7L * distinct);
        }
    }
}
