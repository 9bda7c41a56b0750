package dev.engram.stores;

import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

/**
 * Bounds the memory of every RocksDB store of the process: one LRU block cache shared by all stores, with memtables
 * charged to it through one write-buffer manager, and index/filter blocks counted against it too. Files are
 * compressed with LZ4 (Kafka Streams leaves them uncompressed): the JSON of entities, mentions, pair decisions and
 * passages shrinks to a fraction, for little CPU next to the serialization that made it.
 */
public final class BoundedRocksDbConfig implements RocksDBConfigSetter {

    /** Streams config key for the total bytes of RocksDB memory (block cache + memtables). */
    public static final String MEMORY_BYTES_CONFIG = "engram.rocksdb.memory.bytes";

    private static final double WRITE_BUFFER_RATIO = 0.5;
    /**
     * How many stores' memtables the write budget is sized for. Each store (one per kind and partition: four
     * partitions of the memory step open about 75) keeps its memtable until it is full, and a store that is no longer
     * written (a namespace that went quiet) never flushes it. The write-buffer manager flushes the memtable of
     * whichever store is written once all of them together pass 7/8 of the budget; if the quiet ones alone pass it,
     * every write flushes a memtable of a few kilobytes: tens of thousands of tiny files, compactions and write
     * stalls. With memtables of a 32nd of the budget, 28 full ones fit under it (five or six partitions that took a
     * burst of writes and went quiet); smaller memtables would cost more flushes and compactions on every write.
     */
    static final int MEMTABLES_PER_BUDGET = 32;
    /**
     * The memtables' allocation unit: a memtable in use holds at least one. At RocksDB's default (a megabyte for our
     * memtables) the near-empty memtables of the 70-odd stores alone passed the budget, every write flushed, and the
     * memory step ran at a quarter of its speed once a few hundred documents were in.
     */
    static final long ARENA_BLOCK_BYTES = 64L << 10;

    private static final Object LOCK = new Object();
    private static Cache cache;
    private static WriteBufferManager writeBufferManager;
    private static long configuredBytes;

    @Override
    public void setConfig(String storeName, Options options, Map<String, Object> configs) {
        long bytes = memoryBytes(configs);
        BlockBasedTableConfig table = (BlockBasedTableConfig) options.tableFormatConfig();
        synchronized (LOCK) {
            if (cache == null) {
                configuredBytes = bytes;
                cache = new LRUCache(bytes, -1, false, 0.1);
                writeBufferManager = new WriteBufferManager((long) (bytes * WRITE_BUFFER_RATIO), cache);
            }
            table.setBlockCache(cache);
            options.setWriteBufferManager(writeBufferManager);
        }
        table.setCacheIndexAndFilterBlocks(true);
        table.setCacheIndexAndFilterBlocksWithHighPriority(true);
        table.setPinTopLevelIndexAndFilter(true);
        options.setTableFormatConfig(table);
        options.setCompressionType(CompressionType.LZ4_COMPRESSION);
        options.setMaxWriteBufferNumber(2);
        options.setArenaBlockSize(ARENA_BLOCK_BYTES);
        long budget = (long) (configuredBytes * WRITE_BUFFER_RATIO);
        options.setWriteBufferSize(Math.min(8L << 20, Math.max(256L << 10, budget / MEMTABLES_PER_BUDGET)));
    }

    private static long memoryBytes(Map<String, Object> configs) {
        Object v = configs.get(MEMORY_BYTES_CONFIG);
        if (v == null) {
            return 64L << 20;
        }
        long bytes = v instanceof Number n ? n.longValue() : Long.parseLong(v.toString());
        if (bytes < (8L << 20)) {
            throw new IllegalArgumentException(MEMORY_BYTES_CONFIG + " must be at least 8 MiB, was " + bytes);
        }
        return bytes;
    }

    @Override
    public void close(String storeName, Options options) {
        // The cache and write-buffer manager are shared by all stores of the process and live as long as it.
    }
}
