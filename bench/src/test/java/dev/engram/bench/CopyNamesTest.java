package dev.engram.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

class CopyNamesTest {

    @Test
    void aCopyRenamesUncommonNamesTheSameWayEverywhereAndCountsWhatItKeeps() {
        CopyNames names = new CopyNames(Set.of("London"));
        assertThat(names.heapBytes()).isZero();
        String copy = names.rename("Babbage met Lovelace in London. Babbage left.", 2);
        assertThat(copy).contains("London").doesNotContain("Babbage", "Lovelace");
        String babbage = names.rename("Babbage", 2);
        assertThat(copy).startsWith(babbage).contains(" " + babbage + " left.");
        assertThat(names.rename("Babbage", 3)).isNotEqualTo(babbage);
        assertThat(names.original(copy)).isEqualTo("Babbage met Lovelace in London. Babbage left.");
        long two = names.heapBytes();
        assertThat(two).isPositive();
        names.rename("Babbage", 4);
        assertThat(names.heapBytes()).isGreaterThan(two);
    }
}
