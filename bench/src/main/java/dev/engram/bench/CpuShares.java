package dev.engram.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Where this process's CPU went between two moments, by kind of thread: Engram's stream threads (the ingest
 * application's, which read and understand, and the memory application's), the embedded broker, the Kafka clients'
 * own threads, other Java threads (the benchmark's own among them), and the JVM's and native threads (JIT compilers,
 * garbage collectors, RocksDB's background work): the process's CPU time less that of its Java threads. The JVM's
 * compilation time over the phase comes with it, as elapsed seconds.
 */
final class CpuShares {

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();
    private final OperatingSystemMXBean os = ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class);
    private final Map<Long, Long> startCpu = new HashMap<>();
    private long startProcess;
    private long startCompilation;
    private long startWall;

    /** Marks the start of the measured phase. */
    void start() {
        startCpu.clear();
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null) {
                startCpu.put(t.getThreadId(), Math.max(0, threads.getThreadCpuTime(t.getThreadId())));
            }
        }
        startProcess = os.getProcessCpuTime();
        startCompilation = compiler.getTotalCompilationTime();
        startWall = System.nanoTime();
    }

    /**
     * The shares of the process's CPU time since {@link #start()}, by kind of thread (threads that ended meanwhile
     * count as the rest), with {@code cores}: the process's CPU time over the wall time.
     */
    Map<String, Double> since() {
        Map<String, Long> nanos = new LinkedHashMap<>();
        for (String kind : new String[] {"understand", "memory", "broker", "clients", "other"}) {
            nanos.put(kind, 0L);
        }
        spentByThread((name, spent) -> nanos.merge(kind(name), spent, Long::sum));
        long process = os.getProcessCpuTime() - startProcess;
        long java = nanos.values().stream().mapToLong(Long::longValue).sum();
        // the JVM's own threads (JIT compilers, garbage collectors) and native ones (RocksDB's flushes and
        // compactions),
        // and Java threads that ended meanwhile
        nanos.put("jvm_and_native", Math.max(0, process - java));
        Map<String, Double> shares = new LinkedHashMap<>();
        nanos.forEach((kind, n) -> shares.put(kind, process <= 0 ? 0 : (double) n / process));
        shares.put("cores", (double) process / (System.nanoTime() - startWall));
        // elapsed, not CPU: compiler threads count while they wait for a core, and two of them may run at once
        shares.put("compilation_seconds", (compiler.getTotalCompilationTime() - startCompilation) / 1000.0);
        return shares;
    }

    /**
     * CPU seconds since {@link #start()} by thread name with its digits taken out (a pool's threads together), largest
     * first, with the JVM's and native threads' time as {@code jvm_and_native}.
     */
    Map<String, Double> secondsByThreadName() {
        Map<String, Long> nanos = new HashMap<>();
        spentByThread((name, spent) -> nanos.merge(name.replaceAll("[0-9]+", "#"), spent, Long::sum));
        long java = nanos.values().stream().mapToLong(Long::longValue).sum();
        nanos.put("jvm_and_native", Math.max(0, os.getProcessCpuTime() - startProcess - java));
        Map<String, Double> out = new LinkedHashMap<>();
        nanos.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .filter(e -> e.getValue() > 0)
                .forEach(e -> out.put(e.getKey(), e.getValue() / 1e9));
        return out;
    }

    /** Each live Java thread's name and the CPU nanoseconds it spent since {@link #start()}. */
    private void spentByThread(BiConsumer<String, Long> spent) {
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t == null) {
                continue;
            }
            long now = threads.getThreadCpuTime(t.getThreadId());
            if (now >= 0) {
                spent.accept(t.getThreadName(), now - startCpu.getOrDefault(t.getThreadId(), 0L));
            }
        }
    }

    private static String kind(String thread) {
        if (thread.contains("StreamThread")) {
            return thread.contains("-ingest-") ? "understand" : "memory";
        }
        if (thread.startsWith("kafka-producer-network-thread")
                || thread.startsWith("kafka-coordinator-heartbeat-thread")
                || thread.startsWith("kafka-admin-client-thread")) {
            return "clients";
        }
        if (thread.startsWith("data-plane-kafka")
                || thread.startsWith("kafka-")
                || thread.startsWith("broker-")
                || thread.startsWith("controller-")
                || thread.startsWith("quorum-controller")
                || thread.startsWith("group-coordinator")
                || thread.startsWith("share-")
                || thread.startsWith("TxnMarkerSenderThread")
                || thread.startsWith("AddPartitionsToTxnSenderThread")
                || thread.startsWith("ExpirationReaper")
                || thread.startsWith("transaction-log")
                || thread.startsWith("raft-")) {
            return "broker";
        }
        return "other";
    }
}
