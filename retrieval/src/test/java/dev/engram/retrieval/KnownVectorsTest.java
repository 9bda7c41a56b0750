package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
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
        VectorArena arena = VectorArena.onHeap();
        // per key: its fingerprint, the handle it was last seen at and the comparison that saw it
        Map<String, long[]> model = new HashMap<>();
        for (int step = 0; step < 40_000; step++) {
            String key = keys.get(r.nextInt(keys.size()));
            int op = r.nextInt(4);
            if (op == 0) {
                assertThat(known.remove(key)).isEqualTo(model.remove(key) != null);
            } else if (op == 1 && model.containsKey(key)) {
                long stamp = step + 1L;
                known.seen(known.find(key), stamp);
                model.get(key)[2] = stamp;
            } else {
                long fp = r.nextLong();
                long handle = r.nextInt(1 << 20);
                long[] before = model.put(key, new long[] {fp, handle, before(model, key)});
                assertThat(known.put(key, fp, arena, handle)).isEqualTo(before == null);
            }
            if (step % 997 == 0 || step > 39_900) {
                assertThat(known.size()).isEqualTo(model.size());
                for (String k : keys) {
                    int at = known.find(k);
                    if (model.containsKey(k)) {
                        long[] m = model.get(k);
                        assertThat(at).as(k).isNotNegative();
                        assertThat(known.key(at)).isEqualTo(k);
                        assertThat(known.fingerprint(at)).isEqualTo(m[0]);
                        assertThat(known.sameAs(at, new Vectors(arena, new long[] {m[1]}), 0))
                                .isTrue();
                        assertThat(known.seen(at)).as(k).isEqualTo(m[2]);
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
    void massDeletionsGiveTheRoomBackAndLeaveTheRestFoundWithTheirValues() {
        List<String> keys = keys();
        KnownVectors.Known known = new KnownVectors.Known();
        for (int i = 0; i < keys.size(); i++) {
            assertThat(known.put(keys.get(i), i, null, VectorArena.NONE)).isTrue();
        }
        assertThat(known.capacity()).isGreaterThanOrEqualTo(keys.size());
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(3));
        Set<Integer> removed = new HashSet<>();
        for (int n = 0; n < keys.size() - 5; n++) {
            int gone = order.get(n);
            assertThat(known.remove(keys.get(gone))).isTrue();
            removed.add(gone);
            if (n % 211 == 0 || n > keys.size() - 40) {
                for (int i = 0; i < keys.size(); i++) {
                    int at = known.find(keys.get(i));
                    if (removed.contains(i)) {
                        assertThat(at).isEqualTo(-1);
                    } else {
                        assertThat(known.fingerprint(at)).as(keys.get(i)).isEqualTo(i);
                    }
                }
            }
        }
        assertThat(known.size()).isEqualTo(5);
        assertThat(known.capacity()).isLessThanOrEqualTo(64); // not the room of 2,064
        assertThat(known.remove("never held")).isFalse();
        // and it grows again
        for (int i : removed) {
            assertThat(known.put(keys.get(i), i, null, VectorArena.NONE)).isTrue();
        }
        assertThat(known.size()).isEqualTo(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            assertThat(known.fingerprint(known.find(keys.get(i)))).isEqualTo(i);
        }
    }

    /** The comparison that last saw {@code key}: kept when its values are put again, none (0) for a new key. */
    private static long before(Map<String, long[]> model, String key) {
        long[] m = model.get(key);
        return m == null ? 0 : m[2];
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

        // a plan whose positions were found before the index changed (positions moved) looks them up again
        KnownVectors.Found early = known.found();
        KnownVectors.Plan planned = known.plan(List.of(later), early);
        VectorIndexer.Batch onlyD =
                new VectorIndexer.Batch("passage", List.of("d"), new Vectors(arena, new long[] {next.handle(2)}));
        found = known.found();
        plan = known.plan(List.of(onlyD), found);
        diff = known.diff(plan, found);
        assertThat(diff.deletes().get("passage")).containsExactlyInAnyOrder("a", "c");
        known.published(plan, diff);
        assertThat(known.size()).isEqualTo(1);
        KnownVectors.Diff again = known.diff(planned, early);
        assertThat(again.writes().get(later)).containsExactly(0, 1);
        assertThat(again.deletes()).isEmpty();
    }
}
