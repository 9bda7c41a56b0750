package dev.engram.service.app;

import dev.engram.stores.StateStores;
import dev.engram.stores.StoreSpec;
import java.util.Set;
import java.util.function.IntConsumer;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * Tells the query side when a memory store is rebuilt from its changelog (after an exactly-once rollback wiped it, or
 * when its partition comes to this instance): what snapshots kept from the store before may never have been
 * committed, so they forget it when the restore starts, and again when it ends.
 */
final class MemoryRestores implements StateRestoreListener {

    private static final Set<String> MEMORY =
            StateStores.MEMORY.stream().map(StoreSpec::name).collect(Collectors.toUnmodifiableSet());

    private final IntConsumer forget;

    /** @param forget forgets what snapshots kept of the namespaces of a partition of the memory step */
    MemoryRestores(IntConsumer forget) {
        this.forget = forget;
    }

    @Override
    public void onRestoreStart(TopicPartition partition, String storeName, long startingOffset, long endingOffset) {
        if (MEMORY.contains(storeName)) {
            forget.accept(partition.partition());
        }
    }

    @Override
    public void onBatchRestored(TopicPartition partition, String storeName, long batchEndOffset, long numRestored) {}

    @Override
    public void onRestoreEnd(TopicPartition partition, String storeName, long totalRestored) {
        if (MEMORY.contains(storeName)) {
            forget.accept(partition.partition());
        }
    }
}
