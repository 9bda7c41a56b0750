package dev.engram.service.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.stores.StateStores;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class MemoryRestoresTest {

    @Test
    void aRestoredMemoryStoreMakesSnapshotsForgetWhatTheyKeptOtherStoresDoNot() {
        AtomicInteger forgotten = new AtomicInteger();
        List<Integer> partitions = new ArrayList<>();
        MemoryRestores restores = new MemoryRestores(partition -> {
            partitions.add(partition);
            forgotten.incrementAndGet();
        });
        TopicPartition changelog = new TopicPartition("engram-memory-passages-changelog", 3);

        restores.onRestoreStart(changelog, StateStores.MEMORY_PASSAGES.name(), 0, 100);
        assertThat(forgotten).hasValue(1);
        restores.onBatchRestored(changelog, StateStores.MEMORY_PASSAGES.name(), 50, 50);
        assertThat(forgotten).hasValue(1);
        restores.onRestoreEnd(changelog, StateStores.MEMORY_PASSAGES.name(), 100);
        assertThat(forgotten).hasValue(2);

        restores.onRestoreStart(changelog, StateStores.MEMORY_LOG.name(), 0, 10);
        assertThat(forgotten).hasValue(3);
        restores.onRestoreStart(changelog, StateStores.UNDERSTAND_PENDING.name(), 0, 10);
        restores.onRestoreEnd(changelog, StateStores.EXTRACTION_CACHE.name(), 10);
        assertThat(forgotten).as("not memory's").hasValue(3);
        assertThat(partitions).containsOnly(3);
    }
}
