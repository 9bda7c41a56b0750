package dev.engram.processors;

import dev.engram.metrics.Meters;
import dev.engram.stores.StoreSpec;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A stream step's totals of outcomes (documents read, dead letters), kept in a store of the step's task. The store is
 * written in the same transaction as the step's output, so a record whose transaction is aborted and replayed is
 * counted once, and the totals outlive the process: processed + dead-lettered = produced holds across crashes and
 * restarts. The metrics read them through {@link Meters#total}.
 */
final class Tally {

    private final KeyValueStore<String, Long> store;
    private final String owner;
    private final Meters meters;
    /** The store's totals, read once when the task opens: only this task writes them. */
    private final Map<String, Long> totals = new HashMap<>();

    Tally(ProcessorContext<?, ?> context, StoreSpec<Long> spec, Meters meters) {
        this.store = context.getStateStore(spec.name());
        this.owner = context.taskId() + "/" + spec.name(); // unique in the process: each step has its store
        this.meters = meters;
        try (KeyValueIterator<String, Long> it = store.all()) {
            while (it.hasNext()) {
                KeyValue<String, Long> kv = it.next();
                totals.put(kv.key, kv.value);
                meters.total(owner, kv.key, kv.value);
            }
        }
    }

    /** One more under {@code key}. */
    void add(String key) {
        long total = totals.merge(key, 1L, Long::sum);
        store.put(key, total);
        meters.total(owner, key, total);
    }

    /** The task closes: its totals leave this instance's metrics (they stay in the store). */
    void close() {
        meters.forgetTotals(owner);
    }
}
