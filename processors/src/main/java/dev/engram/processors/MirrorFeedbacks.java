package dev.engram.processors;

import dev.engram.schemas.Compensation;
import dev.engram.schemas.MirrorRecord;
import dev.engram.stores.MirrorEntry;
import dev.engram.stores.MirrorIds;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * What the memory step does with the mirrors' reports (the compensations topic): it records which objects a mirror
 * rejected (their sync state), forgets that once a repair wrote them, and answers a drift found by the consistency check
 * with the object's current state — or a delete, when memory no longer holds it.
 */
final class MirrorFeedbacks {

    /** The longest wait between two repairs of a compensated object. */
    static final Duration MAX_BACKOFF = Duration.ofHours(1);

    private MirrorFeedbacks() {}

    /** Applies one report to {@code tx}; returns the mirror records to emit. */
    static List<MirrorRecord> apply(MemoryTransaction tx, Compensation c) {
        String key = MirrorIds.key(c.namespace(), c.kind(), c.subjectId());
        MirrorEntry entry = tx.mirror().get(key);
        return switch (c.outcome()) {
            case COMPENSATED -> {
                // only the version the mirror tried matters: a newer one is on its way already
                String sink = c.sink().name().toLowerCase(Locale.ROOT);
                if (entry != null && entry.version() == c.version()) {
                    MirrorEntry marked = entry.compensated(sink, c.reason(), tx.now());
                    tx.mirror().put(key, marked);
                    tx.compensated().put(key, marked);
                } else if (entry == null
                        && "delete".equals(c.operation())
                        && Mirror.current(tx, c.kind(), c.subjectId()) == null) {
                    // a delete the mirror refused: it still holds the object, which memory no longer does; the
                    // repair loop sends the delete again until a mirror reports it repaired
                    // (refused again: it keeps its count of repairs, so that its backoff keeps growing)
                    MirrorEntry before = tx.compensated().get(key);
                    int repairs = before == null ? 0 : before.repairs();
                    tx.compensated()
                            .put(key, new MirrorEntry(c.version(), 0, true, sink, c.reason(), repairs, tx.now()));
                }
                yield List.of();
            }
            case REPAIRED -> {
                if (entry != null && entry.version() == c.version() && entry.compensated()) {
                    tx.mirror().put(key, entry.synced(tx.now()));
                    tx.compensated().delete(key);
                } else if (entry == null) {
                    MirrorEntry delete = tx.compensated().get(key);
                    if (delete != null && delete.version() == c.version()) {
                        tx.compensated().delete(key);
                    }
                }
                yield List.of();
            }
            case DRIFTED -> {
                MirrorRecord current = Mirror.current(tx, c.kind(), c.subjectId());
                if (current != null) {
                    yield List.of(current.asRepair());
                }
                // memory does not hold it: the mirror's copy (at the version it reported) is an orphan
                yield List.of(MirrorRecord.delete(c.namespace(), c.kind(), c.subjectId(), c.version(), tx.now())
                        .asRepair());
            }
        };
    }

    /** Whether a compensated object's backoff has passed at {@code now}. */
    static boolean due(MirrorEntry entry, Duration interval, Instant now) {
        Duration wait = interval.multipliedBy(1L << Math.min(entry.repairs(), 12));
        if (wait.compareTo(MAX_BACKOFF) > 0) {
            wait = MAX_BACKOFF;
        }
        return !entry.at().plus(wait).isAfter(now);
    }

    /**
     * Re-emits a compensated object when its backoff has passed ({@code interval} doubled per earlier repair, at most
     * {@link #MAX_BACKOFF}): its state, or, for a refused delete, the delete; returns the records to emit, none when
     * it is not due.
     */
    static List<MirrorRecord> repair(MemoryTransaction tx, MirrorRecord.Kind kind, String id, Duration interval) {
        String key = MirrorIds.key(tx.namespace(), kind, id);
        MirrorEntry entry = tx.compensated().get(key);
        Instant now = tx.now();
        if (entry == null || !due(entry, interval, now)) {
            return List.of();
        }
        MirrorEntry retried = entry.repairing(now);
        tx.compensated().put(key, retried);
        MirrorRecord current = Mirror.current(tx, kind, id);
        if (current == null || tx.mirror().get(key) == null) {
            // a refused delete (memory holds no such object): the delete again, at the version refused
            return List.of(MirrorRecord.delete(tx.namespace(), kind, id, entry.version(), now)
                    .asRepair());
        }
        tx.mirror().put(key, retried);
        return List.of(current.asRepair());
    }
}
