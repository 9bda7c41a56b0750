package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class IdIndexTest {

    @Test
    void findsEveryIdAtItsPositionAndNoOther() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            ids.add("entity-" + i);
        }
        // strings of one hash code: "Aa" and "BB" hash alike, and so do their concatenations
        ids.addAll(List.of("AaAa", "AaBB", "BBAa", "BBBB", ""));
        IdIndex index = new IdIndex(List.copyOf(ids));
        for (int i = 0; i < ids.size(); i++) {
            assertThat(index.indexOf(ids.get(i))).isEqualTo(i);
        }
        assertThat(index.indexOf("entity-5000")).isEqualTo(-1);
        assertThat(index.indexOf("AaAaAa")).isEqualTo(-1);
        assertThat(index.applyAsInt("BBBB")).isEqualTo(5_003);
    }

    @Test
    void anEmptyListFindsNothing() {
        assertThat(new IdIndex(List.of()).indexOf("x")).isEqualTo(-1);
        assertThat(new IdIndex(List.of("x")).indexOf("x")).isZero();
    }
}
