package dev.engram.bench;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * What the benchmark's process holds and does at a namespace size: its heap after a collection, its resident memory
 * and its state directory by store, and the wait until it is quiet.
 */
final class ProcessFootprint {

    private ProcessFootprint() {}

    /**
     * Waits until this process (the service and its broker) is quiet — less than a tenth of a core over two seconds —
     * or two minutes have passed; returns the seconds waited.
     */
    static double settle() throws InterruptedException {
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long t0 = System.nanoTime();
        long deadline = t0 + Duration.ofMinutes(2).toNanos();
        while (System.nanoTime() < deadline) {
            long cpu = os.getProcessCpuTime();
            long w0 = System.nanoTime();
            Thread.sleep(2000);
            double cores = (os.getProcessCpuTime() - cpu) / (double) (System.nanoTime() - w0);
            if (cores < 0.1) {
                break;
            }
        }
        double waited = (System.nanoTime() - t0) / 1e9;
        System.err.printf(Locale.ROOT, "settled after %.0f s%n", waited);
        return waited;
    }

    /**
     * @param benchBytes heap the benchmark itself holds (its cache of base texts' vectors), set apart in {@code
     *     service_heap_mb}
     */
    static Map<String, Object> memory(long passages, Path state, long benchBytes)
            throws IOException, InterruptedException {
        System.gc();
        Map<String, Object> m = new LinkedHashMap<>();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long atCollection = status().getOrDefault("RssAnon", 0L);
        Map<String, Long> status = settledStatus();
        long rss = status.getOrDefault("VmRSS", 0L);
        // by store: a Kafka Streams state directory holds <application>/<task>/rocksdb/<store>/…, summed over tasks
        Map<String, Long> byStore = new TreeMap<>();
        try (Stream<Path> files = Files.walk(state)) {
            files.filter(Files::isRegularFile)
                    .forEach(p -> byStore.merge(
                            storeOf(state.relativize(p)), p.toFile().length(), Long::sum));
        }
        long disk = byStore.values().stream().mapToLong(Long::longValue).sum();
        double per10k = 10_000.0 / Math.max(1, passages);
        m.put("passages", passages);
        m.put("heap_mb", heap / 1e6);
        m.put("bench_heap_mb", benchBytes / 1e6);
        m.put("service_heap_mb", (heap - benchBytes) / 1e6);
        m.put("rss_mb", rss / 1e6);
        // anonymous memory (heap, RocksDB's caches and memtables, native buffers) apart from mapped files' pages,
        // which the kernel can drop and read again
        m.put("rss_anon_mb", status.getOrDefault("RssAnon", 0L) / 1e6);
        m.put("rss_anon_at_collection_mb", atCollection / 1e6);
        m.put("rss_file_mb", status.getOrDefault("RssFile", 0L) / 1e6);
        // where the anonymous memory goes: the heap the collector keeps committed (not only what is live), the JVM's
        // own areas (metaspace, code), NIO's direct buffers; the rest is native (RocksDB, the ONNX runtime, malloc)
        long heapCommitted =
                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
        long nonHeap =
                ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage().getCommitted();
        long direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct"))
                .mapToLong(BufferPoolMXBean::getMemoryUsed)
                .sum();
        m.put("heap_committed_mb", heapCommitted / 1e6);
        m.put("jvm_nonheap_mb", nonHeap / 1e6);
        m.put("direct_buffers_mb", direct / 1e6);
        m.put(
                "native_other_mb",
                Math.max(0, status.getOrDefault("RssAnon", 0L) - heapCommitted - nonHeap - direct) / 1e6);
        m.putAll(rocksDbMemory());
        m.put("state_dir_mb", disk / 1e6);
        m.put("heap_mb_per_10k_passages", heap / 1e6 * per10k);
        m.put("state_dir_mb_per_10k_passages", disk / 1e6 * per10k);
        Map<String, Double> stores = new LinkedHashMap<>();
        byStore.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> stores.put(e.getKey(), e.getValue() / 1e6));
        m.put("state_mb_by_store", stores);
        m.put("heap_top_classes_mb", heapTopClasses(12));
        System.err.printf(
                Locale.ROOT,
                "%d passages: heap %.0f MB, RSS %.0f MB, state %.0f MB (by store: %s)%n",
                passages,
                heap / 1e6,
                rss / 1e6,
                disk / 1e6,
                stores);
        return m;
    }

    /**
     * What RocksDB says it holds, from the Kafka Streams metrics of this process's stores (empty where none are
     * registered): its block cache, shared by every store, with the memtables charged to it
     * ({@code rocksdb_block_cache_mb}, the most any store reports) and the part of it pinned; the memtables of all
     * stores ({@code rocksdb_memtables_mb}); and the table readers' memory outside the cache
     * ({@code rocksdb_table_readers_mb}). Set against {@code native_other_mb}, it tells RocksDB's memory from what
     * malloc keeps and other native libraries hold.
     */
    static Map<String, Object> rocksDbMemory() {
        Map<String, Object> out = new LinkedHashMap<>();
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> stores;
        try {
            stores = server.queryNames(new ObjectName("kafka.streams:type=stream-state-metrics,*"), null);
        } catch (JMException e) {
            return out;
        }
        double cache = 0;
        double pinned = 0;
        double memtables = 0;
        double readers = 0;
        int counted = 0;
        for (ObjectName store : stores) {
            double usage = attribute(server, store, "block-cache-usage");
            if (Double.isNaN(usage)) {
                continue; // not a RocksDB store, or its figures are not recorded
            }
            counted++;
            cache = Math.max(cache, usage);
            pinned = Math.max(pinned, orZero(attribute(server, store, "block-cache-pinned-usage")));
            memtables += orZero(attribute(server, store, "size-all-mem-tables"));
            readers += orZero(attribute(server, store, "estimate-table-readers-mem"));
        }
        if (counted > 0) {
            out.put("rocksdb_stores", counted);
            out.put("rocksdb_block_cache_mb", cache / 1e6);
            out.put("rocksdb_block_cache_pinned_mb", pinned / 1e6);
            out.put("rocksdb_memtables_mb", memtables / 1e6);
            out.put("rocksdb_table_readers_mb", readers / 1e6);
        }
        return out;
    }

    /** A metric's value as a number, or NaN when the bean has no such attribute or it is not a number. */
    private static double attribute(MBeanServer server, ObjectName bean, String name) {
        try {
            return server.getAttribute(bean, name) instanceof Number n ? n.doubleValue() : Double.NaN;
        } catch (JMException | RuntimeException e) {
            return Double.NaN;
        }
    }

    private static double orZero(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    /**
     * The classes whose live instances hold the most heap, in MB, largest first: the JVM's class histogram (which
     * collects first), empty where the JVM has no such diagnostic command.
     */
    static Map<String, Double> heapTopClasses(int top) {
        Map<String, Double> out = new LinkedHashMap<>();
        String histogram;
        try {
            histogram = (String) ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "gcClassHistogram",
                            new Object[] {new String[0]},
                            new String[] {String[].class.getName()});
        } catch (JMException | RuntimeException e) {
            return out;
        }
        // lines as "   1:   123456   78901234  [F (java.base@21)"; the header and the total line do not parse
        for (String line : histogram.split("\n")) {
            String[] cols = line.strip().split("\\s+");
            if (out.size() >= top || cols.length < 4 || !cols[0].endsWith(":")) {
                continue;
            }
            try {
                out.put(cols[3], Long.parseLong(cols[2]) / 1e6);
            } catch (NumberFormatException notARow) {
                // a header line
            }
        }
        return out;
    }

    /**
     * This process's memory figures from {@code /proc/self/status} in bytes ({@code VmRSS}, {@code RssAnon},
     * {@code RssFile}, ...): empty where there is no such file.
     */
    /**
     * The process's status once its anonymous memory has settled after a collection: the collector hands the heap it
     * no longer needs back to the system over the following seconds, so right after it {@code RssAnon} can read far
     * above what the process keeps. Read each second until it moves by less than 1 % (at most 30 s).
     */
    static Map<String, Long> settledStatus() throws IOException, InterruptedException {
        Map<String, Long> status = status();
        for (int i = 0; i < 30; i++) {
            Thread.sleep(1000);
            Map<String, Long> now = status();
            long before = status.getOrDefault("RssAnon", 0L);
            long after = now.getOrDefault("RssAnon", 0L);
            status = now;
            if (Math.abs(after - before) < before / 100) {
                break;
            }
        }
        return status;
    }

    static Map<String, Long> status() throws IOException {
        Map<String, Long> out = new LinkedHashMap<>();
        Path file = Path.of("/proc/self/status");
        if (!Files.isReadable(file)) {
            return out;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.endsWith(" kB")) {
                String digits = line.substring(colon + 1, line.length() - 3).strip();
                try {
                    out.put(line.substring(0, colon), Long.parseLong(digits) * 1024);
                } catch (NumberFormatException notAFigure) {
                    // a line such as "VmFlags" carries no figure
                }
            }
        }
        return out;
    }

    /** The store a file of the state directory belongs to: the directory under {@code rocksdb}, else its top one. */
    static String storeOf(Path relative) {
        for (int i = 0; i + 1 < relative.getNameCount() - 1; i++) {
            if (relative.getName(i).toString().equals("rocksdb")) {
                return relative.getName(i + 1).toString();
            }
        }
        return relative.getNameCount() > 1 ? relative.getName(0).toString() : "(files)";
    }
}
