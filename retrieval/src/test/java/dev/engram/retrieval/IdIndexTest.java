package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

    @Test
    void aGrowingIndexDeclaresEachIdOnceAndFreezesIntoTheSameIndex() {
        List<String> ids = new ArrayList<>();
        IdIndex.Growing growing = new IdIndex.Growing(ids);
        List<String> declared = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            declared.add("entity-" + i);
        }
        declared.addAll(List.of("AaAa", "AaBB", "BBAa", "BBBB", ""));
        for (String id : declared) {
            assertThat(growing.positionOf(id)).as(id).isEqualTo(-1);
            assertThat(ids).last().isEqualTo(id);
            // asked again at once, and after every growth of the table: the position it was given
            assertThat(growing.positionOf(id)).as(id).isEqualTo(ids.size() - 1);
        }
        for (int i = 0; i < declared.size(); i++) {
            assertThat(growing.positionOf(new String(declared.get(i)))).isEqualTo(i);
            assertThat(growing.indexOf(new String(declared.get(i)))).isEqualTo(i);
        }
        // looking up an absent id declares nothing
        assertThat(growing.indexOf("entity-5000")).isEqualTo(-1);
        assertThat(growing.indexOf("AaAaAa")).isEqualTo(-1);
        assertThat(ids).hasSize(declared.size()); // nothing declared twice

        IdIndex frozen = growing.frozen(List.copyOf(ids));
        for (int i = 0; i < declared.size(); i++) {
            assertThat(frozen.indexOf(declared.get(i))).isEqualTo(i);
        }
        assertThat(frozen.indexOf("entity-5000")).isEqualTo(-1);
        assertThat(frozen.indexOf("AaAaAa")).isEqualTo(-1);
        assertThatThrownBy(() -> growing.frozen(List.of("x"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> growing.positionOf("late")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new IdIndex.Growing(new ArrayList<>(List.of("x"))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theBuilderDeclaresAnEntityOnceWhateverItIsAskedAs() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int p = b.passage(new Passage("p", "d", "t", List.of(), "text", "text", 0, 4), new float[] {1, 0});
        int a = b.entity("AaAa", "first name");
        int same = b.entity(new String("AaAa"), "another name");
        int other = b.entity("BBBB", "b");
        b.link(a, p);
        b.link(other, p);
        assertThat(same).isEqualTo(a);
        assertThat(other).isNotEqualTo(a);
        MemoryGraph g = b.build();
        assertThat(g.entityCount()).isEqualTo(2);
        assertThat(g.entityIndex("AaAa")).isEqualTo(a);
        assertThat(g.entityIndex("BBBB")).isEqualTo(other);
        assertThat(g.entityIndex("AaBB")).isEqualTo(-1);
    }
}
