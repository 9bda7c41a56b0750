package dev.engram.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.MemoryGraphBuilder;
import dev.engram.retrieval.VectorArena;
import dev.engram.schemas.Embeddings;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.stores.StoredPassage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A kept passage's mentions: arrays of ids, types and vector handles, with their names packed in the arena. */
class PassagePartTest {

    @TempDir
    Path dir;

    @Test
    void mentionsReadBackTheirIdsTypesVectorsAndNamesAlsoAfterACompaction() {
        try (VectorArena from = VectorArena.mapped(dir, "from");
                VectorArena to = VectorArena.mapped(dir, "to")) {
            long v = from.add(new float[] {1, 2, 3});
            PassagePart.Mentions m = PassagePart.Mentions.of(
                    List.of("s1", "s2", "s3"),
                    List.of("Ada Lovelace", "Zoë Ångström", ""),
                    List.of(EntityType.PERSON, EntityType.OTHER, EntityType.PLACE),
                    new long[] {v, VectorArena.NONE, v},
                    from);
            assertThat(m.size()).isEqualTo(3);
            assertThat(m.surfaceId(1)).isEqualTo("s2");
            assertThat(m.type(2)).isEqualTo(EntityType.PLACE);
            assertThat(m.names()).containsExactly("Ada Lovelace", "Zoë Ångström", "");

            PassagePart.Mentions moved = m.movedTo(from, to);
            assertThat(moved.names()).containsExactly("Ada Lovelace", "Zoë Ångström", "");
            assertThat(moved.vector(1)).isEqualTo(VectorArena.NONE);
            assertThat(to.get(moved.vector(0))).containsExactly(1, 2, 3);
            assertThat(moved.type(0)).isEqualTo(EntityType.PERSON);
            // the vectors and the names are counted as the arena's values, and retired with them
            List<Long> handles = new ArrayList<>();
            moved.forEachHandle(handles::add);
            assertThat(handles).hasSize(4);
            moved.forEachHandle(to::retire);
            assertThat(to.garbage()).isEqualTo(1.0);
        }
    }

    @Test
    void namesTooLongForAnArenaHandleStayOnTheHeapAndNoMentionsTakeNoRoom() {
        try (VectorArena arena = VectorArena.mapped(dir, "long")) {
            String huge = "x".repeat(4 * VectorArena.MAX_LENGTH);
            PassagePart.Mentions m = PassagePart.Mentions.of(
                    List.of("s1"), List.of(huge), List.of(EntityType.OTHER), new long[] {VectorArena.NONE}, arena);
            assertThat(m.names()).containsExactly(huge);
            assertThat(arena.floats()).isZero();
            assertThat(m.movedTo(arena, arena).names()).containsExactly(huge);

            PassagePart.Mentions none = PassagePart.Mentions.of(List.of(), List.of(), List.of(), new long[0], arena);
            assertThat(none.size()).isZero();
            assertThat(none.names()).isEmpty();
            assertThat(arena.floats()).isZero();
        }
    }

    /**
     * A passage's relations and facts read their texts back from the arena in their own order (relations first, then
     * facts, in one packed list), before and after a compaction moves them, as the extraction wrote them.
     */
    @Test
    void factsAndRelationsReadBackTheirOwnTextsAlsoAfterACompaction() {
        Extraction x = new Extraction(
                "Ada Lovelace was born in London.",
                List.of(
                        new Extraction.Entity("Ada Lovelace", EntityType.PERSON, null, List.of(), List.of()),
                        new Extraction.Entity("London", EntityType.PLACE, null, List.of(), List.of())),
                List.of(
                        new Extraction.Fact("Ada Lovelace", "born in", "London", null, 0.9),
                        new Extraction.Fact("Ada Lovelace", "wrote", "Notes", null, 0.8)),
                List.of(
                        new Extraction.Relation("met", List.of("Ada Lovelace", "London"), null, 0.7),
                        new Extraction.Relation("left", List.of("London", "Ada Lovelace"), null, 0.6)),
                List.of("Where was Ada Lovelace born?"),
                "rules",
                null,
                null);
        StoredPassage stored = new StoredPassage(
                "ns",
                "d1",
                "d1:0",
                1,
                0,
                "h",
                "Ada",
                List.of(),
                "Ada Lovelace was born in London.",
                0,
                32,
                x,
                List.of("s1", "s2"),
                "model");
        float[] v = {1, 0, 0};
        Embeddings emb = new Embeddings(v, v, List.of(v, v), List.of(v, v), List.of(v));
        try (VectorArena from = VectorArena.mapped(dir, "texts-from");
                VectorArena to = VectorArena.mapped(dir, "texts-to")) {
            PassagePart part = PassagePart.of(1, stored, v, emb, n -> n.toLowerCase(Locale.ROOT), id -> id, from);
            PassagePart moved = part.movedTo(from, to);
            for (int round = 0; round < 2; round++) {
                PassagePart p = round == 0 ? part : moved;
                VectorArena arena = round == 0 ? from : to;
                MemoryGraphBuilder b = MemoryGraph.builder(1).arena(arena);
                int index = b.passage(p.passage(), p.vector());
                int ada = b.entity("s1", "Ada Lovelace");
                int london = b.entity("s2", "London");
                for (int r = 0; r < p.relations().size(); r++) {
                    p.addRelation(b, r, index, new int[] {ada, london});
                }
                for (int f = 0; f < p.facts().size(); f++) {
                    p.addFact(b, f, index, ada, f == 0 ? london : -1);
                }
                MemoryGraph g = b.build();
                assertThat(g.relationCount()).isEqualTo(2);
                assertThat(g.relationText(0)).isEqualTo("met: Ada Lovelace, London");
                assertThat(g.relationText(1)).isEqualTo("left: London, Ada Lovelace");
                assertThat(g.factCount()).isEqualTo(2);
                assertThat(g.factText(0)).isEqualTo("Ada Lovelace born in London");
                assertThat(g.factText(1)).isEqualTo("Ada Lovelace wrote Notes");
            }
        }
    }
}
