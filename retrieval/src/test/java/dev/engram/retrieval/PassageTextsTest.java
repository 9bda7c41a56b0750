package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A snapshot passage's texts kept in its namespace's arena read back as the passage had them. */
class PassageTextsTest {

    @TempDir
    Path dir;

    private static Passage onHeap(List<String> headings, String memory, int start) {
        return new Passage("p1", "d1", "Zürich", headings, "A city of 東京's size? No.", memory, start, 40);
    }

    @Test
    void aPassageInAnArenaReadsBackItsTextsAndEqualsTheSamePassageOnTheHeap() {
        VectorArena arena = VectorArena.mapped(dir, "ns");
        List<String> headings = List.of("History", "Old town");
        Passage onHeap = onHeap(headings, "", 3);
        Passage inArena = Passage.inArena(arena, "p1", "d1", "Zürich", headings, "A city of 東京's size? No.", "", 3, 40);

        assertThat(inArena.title()).isEqualTo("Zürich");
        assertThat(inArena.headings()).containsExactly("History", "Old town");
        assertThat(inArena.text()).isEqualTo("A city of 東京's size? No.");
        assertThat(inArena.memory()).isEmpty();
        assertThat(inArena.texts()).isEqualTo(onHeap.texts());
        assertThat(inArena).isEqualTo(onHeap).hasSameHashCodeAs(onHeap);
        // a heading less, another memory or another offset is another passage
        assertThat(inArena)
                .isNotEqualTo(onHeap(List.of("History"), "", 3))
                .isNotEqualTo(onHeap(headings, " ", 3))
                .isNotEqualTo(onHeap(headings, "", 4));
        // the heap it holds is its ids, not its texts
        assertThat(inArena.heapBytes()).isLessThan(onHeap.heapBytes());

        VectorArena next = VectorArena.mapped(dir, "ns");
        Passage moved = inArena.movedTo(next);
        // the term cache knows the moved texts as the same: compacting an arena reads no passage again
        assertThat(moved.textKey()).isSameAs(inArena.textKey());
        Passage other = Passage.inArena(arena, "p1", "d1", "Zürich", headings, "x", "", 3, 40);
        assertThat(other.textKey()).isNotSameAs(inArena.textKey());
        inArena.retire();
        other.retire();
        assertThat(arena.garbage()).isEqualTo(1.0);
        arena.close();
        assertThat(moved).isEqualTo(onHeap);
        assertThat(inArena.text()).isEqualTo(onHeap.text()); // a closed arena's mapped pages stay readable
        assertThat(onHeap.movedTo(next)).isSameAs(onHeap);
        next.close();
    }

    @Test
    void nullHeadingsAndIdsAreKeptAsTheHeapKeepsThem() {
        VectorArena arena = VectorArena.onHeap();
        Passage p = Passage.inArena(arena, null, null, "t", null, "text", "m", 0, 4);
        assertThat(p.headings()).isNull();
        assertThat(p).isEqualTo(new Passage(null, null, "t", null, "text", "m", 0, 4));
        assertThat(p.heapBytes()).isPositive();
        List<String> withNull = Arrays.asList("a", null);
        assertThat(Passage.inArena(arena, "p", "d", "t", withNull, "x", "m", 0, 1)
                        .headings())
                .containsExactly("a", null);
    }

    @Test
    void textsTooLongForAnArenaHandleStayOnTheHeapAndReadBackWhole() {
        VectorArena arena = VectorArena.onHeap();
        String huge = "é".repeat(2 * VectorArena.MAX_LENGTH); // 4 MiB of UTF-8: past what one handle holds
        Passage p = Passage.inArena(arena, "p", "d", "t", List.of(), huge, "m", 0, 1);
        assertThat(p.text()).isEqualTo(huge);
        assertThat(arena.floats()).isZero();
        assertThat(p.heapBytes()).isGreaterThan(2L * huge.length());
        p.retire(); // nothing in the arena to count
        assertThat(arena.garbage()).isZero();
    }

    @Test
    void aPassageWithoutTitleOrMemoryKeepsTheirAbsence() {
        VectorArena arena = VectorArena.onHeap();
        Passage p = Passage.inArena(arena, "p", "d", null, List.of(), "text", null, 0, 4);
        assertThat(p.title()).isNull();
        assertThat(p.memory()).isNull();
        assertThat(p.headings()).isEmpty();
        assertThat(p).isEqualTo(new Passage("p", "d", null, List.of(), "text", null, 0, 4));
    }
}
