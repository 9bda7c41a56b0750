package dev.engram.stores;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteOptions;

/** Real RocksDB instances configured as the service configures its stores. */
class BoundedRocksDbConfigTest {

    /** About as many stores as four partitions of the memory step open. */
    private static final int STORES = 80;

    @Test
    void manyStoresWithSmallMemtablesStayUnderTheWriteBudgetInsteadOfFlushingOnEveryWrite(@TempDir Path dir)
            throws Exception {
        RocksDB.loadLibrary();
        BoundedRocksDbConfig config = new BoundedRocksDbConfig();
        List<Options> options = new ArrayList<>();
        List<RocksDB> stores = new ArrayList<>();
        // as Kafka Streams writes its stores: without a write-ahead log (the changelog topics are the log)
        try (WriteOptions write = new WriteOptions().setDisableWAL(true)) {
            for (int i = 0; i < STORES; i++) {
                Options o = new Options().setCreateIfMissing(true).setTableFormatConfig(new BlockBasedTableConfig());
                config.setConfig("store-" + i, o, Map.of(BoundedRocksDbConfig.MEMORY_BYTES_CONFIG, 128L << 20));
                options.add(o);
                RocksDB db = RocksDB.open(o, dir.resolve("store-" + i).toString());
                stores.add(db);
                // a few small writes to each, as the many stores of a memory step get
                for (int k = 0; k < 8; k++) {
                    db.put(write, bytes("fill-" + k), new byte[2048]);
                }
            }
            // Nothing is due to flush: 1.3 MB written under a 64 MiB write budget. With RocksDB's default memtable
            // allocation unit (1 MiB at this memtable size), the stores' near-empty memtables alone passed the budget
            // by the 56th store, and from then on every write flushed the memtable it went to.
            // the settings this test is about (the process-wide budget is set by the first store configured)
            assertThat(options.get(0).writeBufferSize()).isEqualTo(2L << 20);
            assertThat(options.get(0).arenaBlockSize()).isEqualTo(BoundedRocksDbConfig.ARENA_BLOCK_BYTES);
            long written = 0;
            for (int i = 0; i < STORES; i++) {
                settled(stores.get(i)); // a flush runs in the background: a pending one would be missed
                written += filesWritten(dir.resolve("store-" + i));
            }
            assertThat(written).isZero();
            assertThat(stores.get(STORES - 1).get(bytes("fill-7"))).hasSize(2048);
        } finally {
            stores.forEach(RocksDB::close);
            options.forEach(o -> config.close("store", o));
            options.forEach(Options::close);
        }
    }

    @Test
    void storesAreWrittenCompressed(@TempDir Path dir) throws Exception {
        RocksDB.loadLibrary();
        BoundedRocksDbConfig config = new BoundedRocksDbConfig();
        Options o = new Options().setCreateIfMissing(true).setTableFormatConfig(new BlockBasedTableConfig());
        // Kafka Streams sets no compression before it hands the options over
        o.setCompressionType(CompressionType.NO_COMPRESSION);
        config.setConfig("store", o, Map.of(BoundedRocksDbConfig.MEMORY_BYTES_CONFIG, 128L << 20));
        assertThat(o.compressionType()).isEqualTo(CompressionType.LZ4_COMPRESSION);
        long raw = 0;
        try (RocksDB db = RocksDB.open(o, dir.resolve("store").toString());
                WriteOptions write = new WriteOptions().setDisableWAL(true);
                FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
            // values like the stores' JSON: field names and words that recur from record to record
            for (int k = 0; k < 5_000; k++) {
                byte[] value = bytes("{\"namespace\":\"wiki\",\"entity_id\":\"e" + k
                        + "\",\"rule\":\"partial_name\",\"decision\":\"merge\",\"evidence\":\"shared context:"
                        + " the same document, co-mentioned entities\",\"score\":0." + (k % 97) + "}");
                raw += value.length;
                db.put(write, bytes("pair-" + k), value);
            }
            db.flush(flush);
            assertThat(db.get(bytes("pair-4999"))).isNotNull();
        } finally {
            config.close("store", o);
            o.close();
        }
        long stored;
        try (Stream<Path> files = Files.list(dir.resolve("store"))) {
            stored = files.filter(f -> f.toString().endsWith(".sst"))
                    .mapToLong(f -> f.toFile().length())
                    .sum();
        }
        assertThat(stored)
                .as("LZ4 is linked into RocksDB and used")
                .isPositive()
                .isLessThan(raw / 2);
    }

    /** Waits until the store has no flush pending or running. */
    private static void settled(RocksDB db) throws Exception {
        for (int i = 0; i < 500; i++) {
            if (db.getLongProperty("rocksdb.mem-table-flush-pending") == 0
                    && db.getLongProperty("rocksdb.num-running-flushes") == 0) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("a flush did not finish within 5 s");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The highest file number of a store: every flush and compaction writes a new one (compactions delete old ones). */
    private static long filesWritten(Path store) throws IOException {
        try (Stream<Path> files = Files.list(store)) {
            return files.map(f -> f.getFileName().toString())
                    .filter(f -> f.endsWith(".sst"))
                    .mapToLong(f -> Long.parseLong(f.substring(0, f.length() - 4)))
                    .max()
                    .orElse(0);
        }
    }
}
