package dev.engram.bench;

import dev.engram.retrieval.EngramHnswFormat;
import dev.engram.retrieval.HnswVectors;
import dev.engram.retrieval.Retrieval;
import dev.engram.retrieval.VectorIndex;
import dev.engram.retrieval.VectorIndexer;
import dev.engram.schemas.Json;
import dev.engram.topology.Topics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Vector search, as ratios in one run: the HNSW index against an exact scan at growing sizes (query time and
 * recall@10 of the scan's top 10), and an incremental snapshot update against building the index anew.
 *
 * <p>The vectors are synthetic: unit vectors around random topic centres in 384 dimensions (the embedded model's
 * width), so that sizes far beyond the evaluation corpora can be measured without embedding them first. With the
 * default spread a vector's cosine to its topic's centre is about 0.7 and to another vector of its topic about 0.5,
 * so each query has many near ties, as with real embeddings of one subject.
 *
 * <p>Usage: {@code VectorSearchBenchmark [--sizes 5000,20000,60000] [--dim 384] [--queries 200] [--ef 100]
 * [--change 0.01] [--topics 500] [--spread 1.0] [--graphs 16:100,16:64,16:64:int8 [--step 2000]] [--out FILE]}
 */
public final class VectorSearchBenchmark {

    private VectorSearchBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchOptions.parse(
                "vectors",
                args,
                "--change",
                "--dim",
                "--ef",
                "--graphs",
                "--out",
                "--queries",
                "--sizes",
                "--spread",
                "--step",
                "--topics");
        int[] sizes = Arrays.stream(
                        opts.getOrDefault("--sizes", "5000,20000,60000").split(","))
                .mapToInt(Integer::parseInt)
                .sorted()
                .toArray();
        int dim = Integer.parseInt(opts.getOrDefault("--dim", "384"));
        int queryCount = Integer.parseInt(opts.getOrDefault("--queries", "200"));
        int ef = Integer.parseInt(opts.getOrDefault("--ef", "100"));
        double change = Double.parseDouble(opts.getOrDefault("--change", "0.01"));
        int largest = sizes[sizes.length - 1];
        Topics topics = new Topics(
                dim,
                Integer.parseInt(opts.getOrDefault("--topics", "500")),
                Double.parseDouble(opts.getOrDefault("--spread", "1.0")),
                7);
        float[][] all = topics.vectors(largest + (int) (largest * change) + 1);
        float[][] queries = topics.vectors(queryCount);
        int k = 10;

        Map<String, Object> results = new LinkedHashMap<>();
        results.put("dimensions", dim);
        results.put("queries", queryCount);
        results.put("ef", ef);
        List<Map<String, Object>> bySize = new ArrayList<>();
        System.out.printf("%9s %12s %12s %9s %10s%n", "vectors", "exact ms/q", "hnsw ms/q", "speed-up", "recall@10");
        try (HnswVectors store = new HnswVectors(null, 1, ef)) {
            for (int n : sizes) {
                float[][] vectors = Arrays.copyOf(all, n);
                VectorIndexer.Indexed indexed = store.index(List.of(batch(vectors)));
                VectorIndex hnsw = indexed.byKind().get("passage");
                VectorIndex exact = VectorIndex.exact(vectors);
                double exactMs = perQuery(exact, queries, k);
                double hnswMs = perQuery(hnsw, queries, k);
                double recall = recall(exact, hnsw, queries, k);
                indexed.release().run();
                System.out.printf("%9d %12.3f %12.3f %8.1fx %10.3f%n", n, exactMs, hnswMs, exactMs / hnswMs, recall);
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("vectors", n);
                row.put("exact_ms_per_query", exactMs);
                row.put("hnsw_ms_per_query", hnswMs);
                row.put("speedup", exactMs / hnswMs);
                row.put("recall_at_10", recall);
                bySize.add(row);
            }
        }
        results.put("by_size", bySize);

        // A snapshot after a change of `change` of the vectors (half replaced, half added) vs a build from nothing.
        float[][] base = Arrays.copyOf(all, largest);
        int changed = Math.max(2, (int) (largest * change));
        float[][] next = Arrays.copyOf(all, largest + changed / 2);
        for (int i = 0; i < changed / 2; i++) {
            next[i * (largest / (changed / 2))] = topics.vector();
        }
        long t0 = System.nanoTime();
        try (HnswVectors fresh = new HnswVectors(null, 1, ef)) {
            fresh.index(List.of(batch(next))).release().run();
        }
        double rebuildMs = (System.nanoTime() - t0) / 1e6;
        double incrementalMs;
        double unchangedMs;
        double onePassMs;
        double checksum = 0;
        try (HnswVectors store = new HnswVectors(null, 1, ef)) {
            store.index(List.of(batch(base))).release().run();
            double[] unchanged = new double[5];
            double[] pass = new double[unchanged.length];
            for (int r = 0; r < unchanged.length; r++) { // in turn, so that both see the same machine
                long t1 = System.nanoTime();
                store.index(List.of(batch(base))).release().run();
                unchanged[r] = (System.nanoTime() - t1) / 1e6;
                t1 = System.nanoTime();
                checksum += onePass(base);
                pass[r] = (System.nanoTime() - t1) / 1e6;
            }
            unchangedMs = FreshnessBenchmark.quantile(
                    Arrays.stream(unchanged).sorted().boxed().toList(), 0.5);
            onePassMs = FreshnessBenchmark.quantile(
                    Arrays.stream(pass).sorted().boxed().toList(), 0.5);
            long t2 = System.nanoTime();
            store.index(List.of(batch(next))).release().run();
            incrementalMs = (System.nanoTime() - t2) / 1e6;
        }
        System.out.printf(
                "snapshot of %d vectors with %d changed: rebuild %.0f ms, incremental %.0f ms (%.1fx less),"
                        + " unchanged %.1f ms (%.1fx less; %.1fx one pass over the vectors, %.1f ms)%n",
                next.length,
                changed,
                rebuildMs,
                incrementalMs,
                rebuildMs / incrementalMs,
                unchangedMs,
                rebuildMs / unchangedMs,
                unchangedMs / onePassMs,
                onePassMs);
        if (checksum == 42) {
            System.out.println(); // keeps the pass from being optimized away
        }
        Map<String, Object> update = new LinkedHashMap<>();
        update.put("vectors", next.length);
        update.put("changed", changed);
        update.put("rebuild_ms", rebuildMs);
        update.put("incremental_ms", incrementalMs);
        update.put("unchanged_ms", unchangedMs);
        update.put("one_pass_ms", onePassMs);
        update.put("unchanged_vs_one_pass", unchangedMs / onePassMs);
        update.put("rebuild_over_incremental", rebuildMs / incrementalMs);
        results.put("snapshot_update", update);
        if (opts.containsKey("--graphs")) {
            int step = Integer.parseInt(opts.getOrDefault("--step", String.valueOf(base.length)));
            if (step < 1) {
                throw new IllegalArgumentException("--step must be at least 1: " + step);
            }
            results.put("graphs", graphs(opts.get("--graphs"), base, queries, ef, k, step));
        }
        if (opts.containsKey("--out")) {
            Files.write(Path.of(opts.get("--out")), Json.toBytes(results));
        }
    }

    /** The graph comparison writes in the foreground: a failed write fails the run. */
    private static final HnswVectors.Listener QUIET = new HnswVectors.Listener() {
        @Override
        public void applied(long written, long deleted) {}

        @Override
        public void failed(Exception e) {
            throw new IllegalStateException(e);
        }
    };

    /**
     * Graph parameters side by side ({@code M:beam,...}, the first the reference), in two rounds taking turns: the
     * time to index all {@code vectors} from nothing in snapshots of {@code step} new vectors each, as a namespace
     * grows, merges included (the whole work: the index is then closed), and at the end recall@10 against an exact
     * scan and milliseconds per query (each the mean of the rounds: concurrent merges leave a different number of
     * segments from round to round).
     */
    private static List<Map<String, Object>> graphs(
            String spec, float[][] vectors, float[][] queries, int ef, int k, int step) throws Exception {
        List<EngramHnswFormat.Quantization> quantizations = new ArrayList<>();
        List<int[]> params = Arrays.stream(spec.split(","))
                .map(g -> {
                    String[] mb = g.split(":");
                    if (mb.length != 2 && mb.length != 3) {
                        throw new IllegalArgumentException(
                                "--graphs takes M:beam[:quantization], e.g. 16:100,16:64,16:64:int8: " + g);
                    }
                    quantizations.add(
                            mb.length == 3
                                    ? EngramHnswFormat.Quantization.of(mb[2])
                                    : EngramHnswFormat.Quantization.NONE);
                    return new int[] {Integer.parseInt(mb[0].strip()), Integer.parseInt(mb[1].strip())};
                })
                .toList();
        VectorIndex exact = VectorIndex.exact(vectors);
        double[][] builds = new double[params.size()][2];
        double[][] recall = new double[params.size()][2];
        double[][] msPerQuery = new double[params.size()][2];
        for (int round = 0; round < 2; round++) {
            for (int j = 0; j < params.size(); j++) {
                int g = round == 0 ? j : params.size() - 1 - j;
                int[] p = params.get(g);
                long t0 = System.nanoTime();
                double measuring;
                try (HnswVectors store = new HnswVectors(
                        null, 1, ef, EngramHnswFormat.of(p[0], p[1], quantizations.get(g)), null, QUIET)) {
                    // as a namespace grows: a snapshot every `step` new vectors, each flushing a segment of its own
                    VectorIndexer.Indexed indexed = null;
                    for (int size = Math.min(step, vectors.length); ; size = Math.min(size + step, vectors.length)) {
                        if (indexed != null) {
                            indexed.release().run();
                        }
                        indexed = store.index(List.of(batch(Arrays.copyOf(vectors, size))));
                        if (size == vectors.length) {
                            break;
                        }
                    }
                    long m0 = System.nanoTime();
                    VectorIndex hnsw = indexed.byKind().get("passage");
                    recall[g][round] = recall(exact, hnsw, queries, k);
                    msPerQuery[g][round] = perQuery(hnsw, queries, k);
                    indexed.release().run();
                    measuring = (System.nanoTime() - m0) / 1e9;
                } // closing waits for the merges
                builds[g][round] = (System.nanoTime() - t0) / 1e9 - measuring;
            }
        }
        List<Map<String, Object>> out = new ArrayList<>();
        double reference = Math.min(builds[0][0], builds[0][1]);
        System.out.printf(
                "%7s %6s %6s %12s %10s %10s %10s%n",
                "M", "beam", "quant", "build s", "vs first", "recall@10", "ms/query");
        for (int g = 0; g < params.size(); g++) {
            double best = Math.min(builds[g][0], builds[g][1]);
            System.out.printf(
                    "%7d %6d %6s %12.2f %10.2f %10.3f %10.3f%n",
                    params.get(g)[0],
                    params.get(g)[1],
                    quantizations.get(g).wireName(),
                    best,
                    best / reference,
                    (recall[g][0] + recall[g][1]) / 2,
                    (msPerQuery[g][0] + msPerQuery[g][1]) / 2);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("max_conn", params.get(g)[0]);
            row.put("beam_width", params.get(g)[1]);
            row.put("quantization", quantizations.get(g).wireName());
            row.put("vectors", vectors.length);
            row.put("build_seconds", best);
            row.put("build_seconds_rounds", List.of(builds[g][0], builds[g][1]));
            row.put("build_vs_first", best / reference);
            row.put("snapshot_step", step);
            row.put("recall_at_10", (recall[g][0] + recall[g][1]) / 2);
            row.put("recall_at_10_rounds", List.of(recall[g][0], recall[g][1]));
            row.put("hnsw_ms_per_query", (msPerQuery[g][0] + msPerQuery[g][1]) / 2);
            out.add(row);
        }
        return out;
    }

    /**
     * The least a snapshot with nothing changed can cost: one read of every value of every vector (the index cannot
     * know that a vector is unchanged without reading it).
     */
    private static double onePass(float[][] vectors) {
        double sum = 0;
        for (float[] v : vectors) {
            for (float x : v) {
                sum += x;
            }
        }
        return sum;
    }

    private static VectorIndexer.Batch batch(float[][] vectors) {
        List<String> keys = new ArrayList<>(vectors.length);
        for (int i = 0; i < vectors.length; i++) {
            keys.add("v" + i);
        }
        return new VectorIndexer.Batch("passage", keys, vectors);
    }

    /** Milliseconds per query, over a warm-up pass and then the timed one. */
    private static double perQuery(VectorIndex index, float[][] queries, int k) {
        for (float[] q : queries) {
            index.nearest(q, k);
        }
        long t0 = System.nanoTime();
        for (float[] q : queries) {
            index.nearest(q, k);
        }
        return (System.nanoTime() - t0) / 1e6 / queries.length;
    }

    private static double recall(VectorIndex exact, VectorIndex approximate, float[][] queries, int k) {
        int found = 0;
        for (float[] q : queries) {
            List<Integer> truth =
                    exact.nearest(q, k).stream().map(Retrieval.Scored::passage).toList();
            found += (int) approximate.nearest(q, k).stream()
                    .filter(s -> truth.contains(s.passage()))
                    .count();
        }
        return (double) found / ((double) queries.length * k);
    }

    /** Unit vectors scattered around random topic centres. */
    private static final class Topics {
        private final Random random;
        private final float[][] centres;
        private final double spread;

        Topics(int dim, int count, double spread, long seed) {
            this.random = new Random(seed);
            this.spread = spread;
            this.centres = new float[count][dim];
            for (float[] c : centres) {
                for (int i = 0; i < dim; i++) {
                    c[i] = (float) random.nextGaussian();
                }
            }
        }

        float[] vector() {
            float[] c = centres[random.nextInt(centres.length)];
            float[] v = new float[c.length];
            double norm = 0;
            for (int i = 0; i < v.length; i++) {
                v[i] = c[i] + (float) (spread * random.nextGaussian());
                norm += (double) v[i] * v[i];
            }
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (v[i] / Math.sqrt(norm));
            }
            return v;
        }

        float[][] vectors(int n) {
            float[][] out = new float[n][];
            for (int i = 0; i < n; i++) {
                out[i] = vector();
            }
            return out;
        }
    }
}
