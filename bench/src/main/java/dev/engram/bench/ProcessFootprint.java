package dev.engram.bench;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

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

    static Map<String, Object> memory(long passages, Path state) throws IOException {
        System.gc();
        Map<String, Object> m = new LinkedHashMap<>();
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long rss = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
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
        m.put("rss_mb", rss / 1e6);
        m.put("state_dir_mb", disk / 1e6);
        m.put("heap_mb_per_10k_passages", heap / 1e6 * per10k);
        m.put("state_dir_mb_per_10k_passages", disk / 1e6 * per10k);
        Map<String, Double> stores = new LinkedHashMap<>();
        byStore.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> stores.put(e.getKey(), e.getValue() / 1e6));
        m.put("state_mb_by_store", stores);
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
