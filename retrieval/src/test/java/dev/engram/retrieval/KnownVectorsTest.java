package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The table of what an index holds per kind: keys found, added and removed as a map would, in arrays. */
class KnownVectorsTest {

    /** Keys of one hash code ("Aa" and "BB" hash alike), and ordinary ones: long runs of one home slot in the table. */
    private static List<String> keys() {
        List<String> keys = new ArrayList<>();
        String[] halves = {"Aa", "BB"};
        for (int i = 0; i < 64; i++) {
            StringBuilder sb = new StringBuilder();
            for (int bit = 0; bit < 6; bit++) {
                sb.append(halves[(i >> bit) & 1]);
            }
            keys.add(sb.toString());
        }
        for (int i = 0; i < 2_000; i++) {
            keys.add("passage-" + i + "#f" + (i % 7));
        }
        return keys;
    }

    @Test
    void addsAndRemovalsInAnyOrderLeaveEveryKeyFoundWithItsValuesAsAMapWould() {
        List<String> keys = keys();
        Random r = new Random(5);
        KnownVectors.Known known = new KnownVectors.Known();
        Map<String, Long> model = new HashMap<>();
        for (int step = 0; step < 40_000; step++) {
            String key = keys.get(r.nextInt(keys.size()));
            if (r.nextInt(3) == 0) {
                assertThat(known.remove(key)).isEqualTo(model.remove(key) != null);
            } else {
                long fp = r.nextLong();
                assertThat(known.put(key, fp, null, VectorArena.NONE)).isEqualTo(model.put(key, fp) == null);
            }
            if (step % 997 == 0 || step > 39_900) {
                assertThat(known.size()).isEqualTo(model.size());
                for (String k : keys) {
                    int at = known.find(k);
                    if (model.containsKey(k)) {
                        assertThat(at).as(k).isNotNegative();
                        assertThat(known.key(at)).isEqualTo(k);
                        assertThat(known.fingerprint(at)).isEqualTo(model.get(k));
                    } else {
                        assertThat(at).as(k).isEqualTo(-1);
                    }
                }
            }
        }
        // emptied, and filled again
        for (String k : keys) {
            known.remove(k);
        }
        assertThat(known.size()).isZero();
        for (String k : keys) {
            assertThat(known.find(k)).isEqualTo(-1);
            assertThat(known.put(k, k.length(), null, VectorArena.NONE)).isTrue();
        }
        assertThat(known.size()).isEqualTo(keys.size());
        for (String k : keys) {
            assertThat(known.fingerprint(known.find(k))).isEqualTo(k.length());
        }
    }

    @Test
    void aVectorSeenAtItsHandleIsKnownWithoutReadingItAndWhatASnapshotLacksIsDeleted() {
        VectorArena arena = VectorArena.onHeap();
        Vectors vectors = new Vectors(arena, new long[] {
            arena.add(new float[] {1, 0}), arena.add(new float[] {0, 1}), arena.add(new float[] {1, 1})
        });
        KnownVectors known = new KnownVectors(1);
        VectorIndexer.Batch batch = new VectorIndexer.Batch("passage", List.of("a", "b", "c"), vectors);
        KnownVectors.Found found = known.found();
        KnownVectors.Plan plan = known.plan(List.of(batch), found);
        KnownVectors.Diff diff = known.diff(plan, found);
        assertThat(diff.writes().get(batch)).containsExactly(0, 1, 2);
        known.published(plan, diff);
        assertThat(known.size()).isEqualTo(3);

        // the same vectors again: nothing to write or delete
        found = known.found();
        plan = known.plan(List.of(batch), found);
        diff = known.diff(plan, found);
        assertThat(diff.changes()).isZero();

        // "b" gone, "c" changed, "d" new
        Vectors next = new Vectors(
                arena, new long[] {vectors.handle(0), arena.add(new float[] {2, 1}), arena.add(new float[] {3, 3})});
        VectorIndexer.Batch later = new VectorIndexer.Batch("passage", List.of("a", "c", "d"), next);
        found = known.found();
        plan = known.plan(List.of(later), found);
        diff = known.diff(plan, found);
        assertThat(diff.writes().get(later)).containsExactly(1, 2);
        assertThat(diff.deletes().get("passage")).containsExactly("b");
        assertThat(diff.stale().get("passage")).containsExactlyInAnyOrder("b", "c");
        known.published(plan, diff);
        assertThat(known.size()).isEqualTo(3);
    }
}
