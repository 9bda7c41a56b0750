package dev.engram.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.retrieval.VectorArena;
import dev.engram.schemas.EntityType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
}
