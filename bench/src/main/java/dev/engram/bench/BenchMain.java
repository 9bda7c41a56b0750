package dev.engram.bench;

import java.util.Map;
import java.util.TreeMap;

/**
 * {@code ./engram bench NAME [--option value ...]}: runs the benchmark NAME with its options ({@link BenchOptions});
 * exit 0 when it ran (or its usage was asked for), 2 on a usage error, 1 when it failed.
 */
public final class BenchMain {

    /** A benchmark's entry point. */
    private interface Bench {
        void run(String[] args) throws Exception;
    }

    private static final Map<String, Bench> BENCHES = new TreeMap<>(Map.ofEntries(
            Map.entry("ingest", IngestBenchmark::main),
            Map.entry("extraction", ExtractionEval::main),
            Map.entry("understand", UnderstandBenchmark::main),
            Map.entry("embedders", EmbedderBenchmark::main),
            Map.entry("resolution", EntityResolutionEval::main),
            Map.entry("vectors", VectorSearchBenchmark::main),
            Map.entry("load", LoadBenchmark::main),
            Map.entry("sinks", SinkBenchmark::main),
            Map.entry("freshness", FreshnessBenchmark::main),
            Map.entry("scale", ScaleBenchmark::main),
            Map.entry("snapshot", SnapshotBuildBenchmark::main),
            Map.entry("neo4j", Neo4jComparison::main)));

    private BenchMain() {}

    public static void main(String[] args) {
        Bench bench = args.length == 0 ? null : BENCHES.get(args[0]);
        if (bench == null) {
            System.err.println(
                    "engram: bench needs one of: " + String.join(", ", BENCHES.keySet()) + " (bench/README.md)");
            System.exit(2);
        }
        String[] rest = new String[args.length - 1];
        System.arraycopy(args, 1, rest, 0, rest.length);
        try {
            bench.run(rest);
        } catch (BenchOptions.Exit e) {
            if (e.code != 0) {
                System.err.println(e.getMessage());
            }
            System.exit(e.code);
        } catch (Exception e) {
            System.err.println("engram bench " + args[0] + ": failed: " + e);
            e.printStackTrace(System.err);
            System.exit(1);
        }
    }
}
