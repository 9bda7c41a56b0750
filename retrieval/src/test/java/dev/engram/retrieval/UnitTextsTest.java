package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class UnitTextsTest {

    private static float[] unit(int i) {
        float[] v = new float[4];
        v[i % 4] = 1;
        return v;
    }

    /**
     * Facts and relations whose texts are packed in the arena read back as the ones given on the heap, score alike in the
     * BM25 index of unit names, and a second build with the same keys and a term cache reads none of them again.
     */
    @Test
    void textsPackedInTheArenaReadBackAndAreIndexedAsTextsOnTheHeap() {
        VectorArena arena = VectorArena.onHeap();
        List<String> texts = List.of("born in: Ada Lovelace, London", "Ada Lovelace wrote the first program", "Ü ñ 字");
        long handle = arena.addBytes(PackedStrings.pack(texts));
        Object relationKey = new Object();
        String factKey = "p1#f1";
        String otherKey = "p1#f2";
        TermCache cache = new TermCache();
        long passageVector = arena.add(unit(0));
        long factVector = arena.add(unit(1));
        long otherVector = arena.add(unit(2));
        long before = 0;

        Passage passage = new Passage("p1", "d", "T", List.of(), "text", null, 0, 4);
        MemoryGraph packed = null;
        for (int round = 0; round < 2; round++) {
            MemoryGraphBuilder b = MemoryGraph.builder(1).arena(arena).terms(cache);
            int p = b.passage(passage, passageVector);
            int ada = b.entity("e1", "Ada Lovelace");
            int london = b.entity("e2", "London");
            b.link(ada, p);
            b.link(london, p);
            b.relation(new MemoryGraph.PackedText(handle, 0, relationKey), p, new int[] {ada, london});
            b.fact(new MemoryGraph.PackedText(handle, 1, factKey), "wrote", p, ada, -1, 0.9, factVector, factKey);
            b.fact(new MemoryGraph.PackedText(handle, 2, otherKey), "", p, -1, -1, 0.5, otherVector, otherKey);
            packed = b.build();
            if (round == 0) {
                before = arena.floats();
            }
        }

        MemoryGraphBuilder h = MemoryGraph.builder(1);
        int p = h.passage(new Passage("p1", "d", "T", List.of(), "text", null, 0, 4), unit(0));
        int ada = h.entity("e1", "Ada Lovelace");
        int london = h.entity("e2", "London");
        h.link(ada, p);
        h.link(london, p);
        h.relation(texts.get(0), p, new int[] {ada, london});
        h.fact(texts.get(1), "wrote", p, ada, -1, 0.9, unit(1));
        h.fact(texts.get(2), "", p, -1, -1, 0.5, unit(2));
        MemoryGraph onHeap = h.build();

        assertThat(packed.relationText(0)).isEqualTo(onHeap.relationText(0)).isEqualTo(texts.get(0));
        assertThat(packed.factText(0)).isEqualTo(texts.get(1));
        assertThat(packed.factText(1)).as("any UTF-8").isEqualTo(texts.get(2));
        assertThat(packed.fact(0)).isEqualTo(onHeap.fact(0));
        for (String q : List.of("program", "london", "ada lovelace", "字")) {
            assertThat(packed.unitNames.scores(q)).as(q).containsExactly(onHeap.unitNames.scores(q));
        }
        assertThat(arena.floats()).as("the second build appended nothing").isEqualTo(before);
        MemoryGraph g = packed;
        assertThatThrownBy(() -> g.factText(2)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void aPackedTextNeedsAHandleAndAPlace() {
        UnitTexts.Builder b = new UnitTexts.Builder();
        assertThatThrownBy(() -> b.add(VectorArena.NONE, 0, "k")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.add(5, -1, "k")).isInstanceOf(IllegalArgumentException.class);
        for (int i = 0; i < 40; i++) { // past the first arrays
            b.add("t" + i);
        }
        UnitTexts t = b.build(VectorArena.onHeap());
        assertThat(t.size()).isEqualTo(40);
        assertThat(t.get(39)).isEqualTo("t39");
        assertThat(b.key(3)).isEqualTo("t3");
    }
}
