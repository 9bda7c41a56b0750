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
        byte[] packed = PackedStrings.pack(strings);
        for (int i = 0; i < strings.size(); i++) {
            assertThat(PackedStrings.get(packed, i)).isEqualTo(strings.get(i));
        }
        assertThatThrownBy(() -> PackedStrings.get(packed, strings.size()))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> PackedStrings.get(packed, -1)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void bytesCutShortAreRefusedNotReadPastTheirEnd() {
        byte[] packed = PackedStrings.pack(List.of("hello", "world"));
        assertThatThrownBy(() -> PackedStrings.unpack(Arrays.copyOf(packed, 0)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PackedStrings.unpack(Arrays.copyOf(packed, packed.length - 1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PackedStrings.get(Arrays.copyOf(packed, packed.length - 1), 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(PackedStrings.get(Arrays.copyOf(packed, packed.length - 1), 0))
                .isEqualTo("hello");
    }
}
