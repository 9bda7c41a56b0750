package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A snapshot passage's texts kept in its namespace's arena read back as the passage had them. */
class PassageTextsTest {

    @TempDir
    Path dir;

    @Test
    void aPassageInAnArenaReadsBackItsTextsAndEqualsTheSamePassageOnTheHeap() {
        VectorArena arena = VectorArena.mapped(dir, "ns");
        MemoryGraph.Passage onHeap = new MemoryGraph.Passage(
                "p1", "d1", "Zürich", List.of("History", "Old town"), "A city of 東京's size? No.", "", 3, 40);
        MemoryGraph.Passage inArena = MemoryGraph.Passage.inArena(
                arena, "p1", "d1", "Zürich", List.of("History", "Old town"), "A city of 東京's size? No.", "", 3, 40);

        assertThat(inArena.title()).isEqualTo("Zürich");
        assertThat(inArena.headings()).containsExactly("History", "Old town");
        assertThat(inArena.text()).isEqualTo("A city of 東京's size? No.");
        assertThat(inArena.memory()).isEmpty();
        assertThat(inArena.titleAndText())
                .isEqualTo(onHeap.titleAndText())
                .isEqualTo("Zürich\nA city of 東京's size? No.");
        assertThat(inArena).isEqualTo(onHeap).hasSameHashCodeAs(onHeap);
        // the heap it holds is its ids, not its texts
        assertThat(inArena.heapBytes()).isLessThan(onHeap.heapBytes());

        VectorArena next = VectorArena.mapped(dir, "ns");
        MemoryGraph.Passage moved = inArena.movedTo(next);
        inArena.retire();
        assertThat(arena.garbage()).isEqualTo(1.0);
        arena.close();
        assertThat(moved).isEqualTo(onHeap);
        assertThat(inArena.text()).isEqualTo(onHeap.text()); // a closed arena's mapped pages stay readable
        assertThat(onHeap.movedTo(next)).isSameAs(onHeap);
        next.close();
    }

    @Test
    void aPassageWithoutTitleOrMemoryKeepsTheirAbsence() {
        VectorArena arena = VectorArena.onHeap();
        MemoryGraph.Passage p = MemoryGraph.Passage.inArena(arena, "p", "d", null, List.of(), "text", null, 0, 4);
        assertThat(p.title()).isNull();
        assertThat(p.memory()).isNull();
        assertThat(p.headings()).isEmpty();
        assertThat(p).isEqualTo(new MemoryGraph.Passage("p", "d", null, List.of(), "text", null, 0, 4));
    }
}
