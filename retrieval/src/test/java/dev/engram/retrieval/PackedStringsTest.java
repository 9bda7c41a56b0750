package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PackedStringsTest {

    @Test
    void stringsOfEveryKindReadBackInOrderWithTheirNulls() {
        List<String> strings = new ArrayList<>(
                Arrays.asList("", null, "Zürich 東京 🙂", "x".repeat(127), "y".repeat(128), "z".repeat(20_000), null));
        assertThat(PackedStrings.unpack(PackedStrings.pack(strings))).isEqualTo(strings);
        assertThat(PackedStrings.unpack(PackedStrings.pack(List.of()))).isEmpty();
    }

    @Test
    void bytesCutShortAreRefusedNotReadPastTheirEnd() {
        byte[] packed = PackedStrings.pack(List.of("hello", "world"));
        assertThatThrownBy(() -> PackedStrings.unpack(Arrays.copyOf(packed, 0)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PackedStrings.unpack(Arrays.copyOf(packed, packed.length - 1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
