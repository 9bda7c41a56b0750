package dev.engram.stores;

import java.util.Map;
import org.apache.kafka.streams.state.RocksDBConfigSetter;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.WriteBufferManager;

/**
 * Bounds the memory of every RocksDB store of the process: one LRU block cache shared by all stores, with memtables
 * charged to it through one write-buffer manager, and index/filter blocks counted against it too.
 */
public final class BoundedRocksDbConfig implements RocksDBConfigSetter {

    /** Streams config key for the total bytes of RocksDB memory (block cache + memtables). */
    public static final String MEMORY_BYTES_CONFIG = "engram.rocksdb.memory.bytes";

    private static final double WRITE_BUFFER_RATIO = 0.5;
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
        options.setMaxWriteBufferNumber(2);
        options.setWriteBufferSize(Math.max(1L << 20, configuredBytes / 16));
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
