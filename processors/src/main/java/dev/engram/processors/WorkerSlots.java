package dev.engram.processors;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The worker slots one task of a remote understand step holds, and the outcomes of its calls: which passages hold a
 * slot (in a call, or waiting to be tried again), the calls handed to the workers, and the inbox their outcomes arrive
 * in. Touched by the stream thread only (the workers write to a generation's inbox).
 */
final class WorkerSlots {

    /**
     * A passage with a slot: in {@code call} (a token, matched against the outcome), or waiting with no call until
     * {@code retryAtMs}; {@code failures} transient failures so far; {@code extraction} one already paid for, that the
     * next attempt reuses.
     */
    record Held(Object call, int failures, long retryAtMs, Extraction extraction) {}

    /** An outcome, with the call it answers. */
    record Arrived(Object call, UnderstandingWorkers.Outcome outcome) {}

    /** The outcomes of one run of the processor; once it is closed, an outcome only gives its slot back. */
    private static final class Generation {
        private final ConcurrentLinkedQueue<Arrived> inbox = new ConcurrentLinkedQueue<>();
        private boolean closed;

        synchronized void deliver(Arrived arrived, UnderstandingWorkers workers) {
            if (closed) {
                workers.release();
            } else {
                inbox.add(arrived);
            }
        }

        synchronized void close(UnderstandingWorkers workers) {
            closed = true;
            while (inbox.poll() != null) {
                workers.release();
            }
        }

        Arrived next() {
            return inbox.poll();
        }
    }

    /** Whose slots they are; null for a local step, which never holds one. */
    private final UnderstandingWorkers workers;

    /**
     * Passages holding a worker slot: in a call, or waiting to be tried again. Every slot taken is either a call whose
     * outcome has not been settled yet, or a passage waiting here with no call: it goes back when that call's outcome
     * is settled (or arrives after a close), or when the waiting passage leaves.
     */
    private final Map<String, Held> held = new HashMap<>();
    /** This run of the processor (Streams may close a task and initialize it again, on the same object). */
    private Generation generation;

    WorkerSlots(UnderstandingWorkers workers) {
        this.workers = workers;
    }

    /** Starts a run of the processor: nothing holds a slot yet. */
    void open() {
        generation = new Generation();
        held.clear();
    }

    /** Whether {@code passageId} holds a slot. */
    boolean holds(String passageId) {
        return held.containsKey(passageId);
    }

    /** The slot {@code passageId} holds, or null. */
    Held held(String passageId) {
        return held.get(passageId);
    }

    /** The passages holding a slot as they are now, to go through while some of them are called or leave. */
    List<Map.Entry<String, Held>> all() {
        return List.copyOf(held.entrySet());
    }

    /**
     * Hands {@code upsert} to a worker, with the slot the caller holds for it and its extraction if one is known
     * (cached, or paid for by an earlier attempt).
     *
     * @param key the key of its extraction in the cache
     */
    void call(String passageId, PassageEvent.Upsert upsert, String key, int failures, Extraction known) {
        Object call = new Object();
        Generation g = generation;
        held.put(passageId, new Held(call, failures, 0, known));
        if (!workers.submit(upsert, key, known, outcome -> g.deliver(new Arrived(call, outcome), workers))) {
            held.remove(passageId);
            workers.release();
        }
    }

    /** The next outcome that arrived, or null. */
    Arrived next() {
        return generation.next();
    }

    /** Keeps the slot of {@code passageId}, whose call ended, for another attempt at {@code retryAtMs}. */
    void retryAt(String passageId, int failures, long retryAtMs, Extraction known) {
        held.put(passageId, new Held(null, failures, retryAtMs, known));
    }

    /** The call of {@code passageId} is settled: its slot goes back. */
    void settled(String passageId) {
        held.remove(passageId);
        workers.release();
    }

    /** {@code passageId} leaves: a slot it waits with goes back (a call's, when it ends). */
    void leave(String passageId) {
        Held h = held.remove(passageId);
        if (h != null && h.call() == null) {
            workers.release();
        }
    }

    /** Ends the run: a call in flight gives its slot back when it ends, a passage waiting with no call gives it now. */
    void close() {
        generation.close(workers);
        for (Held h : held.values()) {
            if (h.call() == null) {
                workers.release();
            }
        }
        held.clear();
    }
}
