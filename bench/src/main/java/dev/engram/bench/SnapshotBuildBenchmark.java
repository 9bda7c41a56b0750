package dev.engram.bench;

import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.MemoryGraphBuilder;
import dev.engram.retrieval.Passage;
import dev.engram.retrieval.TermCache;
import dev.engram.retrieval.VectorArena;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * How long one snapshot of a namespace takes to lay out, without Kafka or the stores: a synthetic namespace of
 * {@code --passages} passages is given to the snapshot builder round after round, as the query side gives it its kept
 * passages (the same passage objects, vectors already in the arena, one term cache across builds), and each round's
 * filling of the builder and {@code build()} are timed. What a build reads from the stores, and the vector indexes
 * (exact here, which read nothing when made), are not in it: it measures the work over the whole namespace that every
 * build repeats. Not a test: nothing is asserted.
 *
 * <p>The namespace: documents of five passages, one in ten a conversation whose passages are turns of one session
 * with an event time; 80 words a passage drawn from 30,000 by a Zipf-like law; eight entity mentions a passage among
 * twice as many entities as passages, likewise skewed; two facts a passage; a utility question for three passages in ten.
 */
public final class SnapshotBuildBenchmark {

    private static final int WORDS_PER_PASSAGE = 80;
    private static final int VOCABULARY = 30_000;
    private static final int MENTIONS_PER_PASSAGE = 8;
    private static final int FACTS_PER_PASSAGE = 2;

    private SnapshotBuildBenchmark() {}

    /** One synthetic passage and what the builder is told of it. */
    private record Synthetic(
            Passage passage,
            long vector,
            String session,
            long time,
            String[] entityIds,
            String[] entityNames,
            String[] factTexts,
            long[] questions) {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = BenchOptions.parse("snapshot", args, "--passages", "--rounds", "--dims", "--out");
        int n = Integer.parseInt(opts.getOrDefault("--passages", "100000"));
        int rounds = Integer.parseInt(opts.getOrDefault("--rounds", "5"));
        int dims = Integer.parseInt(opts.getOrDefault("--dims", "32"));
        if (n < 1 || rounds < 1 || dims < 1) {
            throw new IllegalArgumentException("--passages, --rounds and --dims must be positive");
        }
        VectorArena arena = VectorArena.onHeap();
        List<Synthetic> namespace = namespace(n, dims, arena, new Random(20261130L));
        TermCache terms = new TermCache();
        List<Map<String, Object>> timed = new ArrayList<>();
        double[] builds = new double[rounds];
        // round 0 fills the term cache, as a namespace's first snapshot does; it is reported, not counted
        for (int round = 0; round <= rounds; round++) {
            long t0 = System.nanoTime();
            MemoryGraphBuilder b = MemoryGraph.builder(round).arena(arena).terms(terms);
            fill(b, namespace);
            long t1 = System.nanoTime();
            MemoryGraph g = b.build();
            long t2 = System.nanoTime();
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("round", round);
            r.put("fill_seconds", (t1 - t0) / 1e9);
            r.put("build_seconds", (t2 - t1) / 1e9);
            r.put("passages", g.passageCount());
            r.put("entities", g.entityCount());
            r.put("facts", g.factCount());
            timed.add(r);
            if (round > 0) {
                builds[round - 1] = (t2 - t0) / 1e9;
            }
            System.out.printf(
                    "round %d: fill %.3f s, build %.3f s (%d passages, %d entities, %d facts)%n",
                    round, (t1 - t0) / 1e9, (t2 - t1) / 1e9, g.passageCount(), g.entityCount(), g.factCount());
            g.release();
        }
        Arrays.sort(builds);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("passages", n);
        result.put("dims", dims);
        result.put("rounds", timed);
        result.put("fill_and_build_seconds_median", builds[builds.length / 2]);
        result.put("fill_and_build_seconds_min", builds[0]);
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
        System.out.println(json);
        String out = opts.get("--out");
        if (out != null) {
            Files.writeString(Path.of(out), json);
        }
    }

    private static void fill(MemoryGraphBuilder b, List<Synthetic> namespace) {
        for (Synthetic s : namespace) {
            int p = b.passage(s.passage(), s.vector());
            if (s.session() != null) {
                b.session(p, s.session(), s.time());
                b.time(p, s.time());
            }
            int[] entities = new int[s.entityIds().length];
            for (int i = 0; i < entities.length; i++) {
                entities[i] = b.entity(s.entityIds()[i], s.entityNames()[i], EntityType.OTHER);
                b.link(entities[i], p);
            }
            for (int f = 0; f < s.factTexts().length; f++) {
                int head = entities[f % entities.length];
                int tail = entities[(f + 1) % entities.length];
                b.fact(s.factTexts()[f], "related_to", p, head, tail, 0.9, VectorArena.NONE, null);
            }
            if (s.questions().length > 0) {
                b.questions(
                        p,
                        s.questions(),
                        List.of(MemoryGraph.questionKey(s.passage().id(), 0)));
            }
        }
    }

    private static List<Synthetic> namespace(int n, int dims, VectorArena arena, Random random) {
        String[] words = new String[VOCABULARY];
        for (int i = 0; i < words.length; i++) {
            words[i] = "w" + Integer.toString(i, 36);
        }
        int entityCount = Math.max(1, 2 * n);
        List<Synthetic> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int document = i / 5;
            boolean conversation = document % 10 == 9;
            StringBuilder text = new StringBuilder();
            for (int w = 0; w < WORDS_PER_PASSAGE; w++) {
                text.append(w == 0 ? "" : " ").append(words[skewed(random, VOCABULARY)]);
            }
            Passage passage = new Passage(
                    "p" + i,
                    "d" + document,
                    "Document " + document,
                    List.of(),
                    text.toString(),
                    text.substring(0, Math.min(120, text.length())),
                    (i % 5) * 1000,
                    (i % 5) * 1000 + 900);
            String[] ids = new String[MENTIONS_PER_PASSAGE];
            String[] names = new String[MENTIONS_PER_PASSAGE];
            for (int m = 0; m < ids.length; m++) {
                int e = skewed(random, entityCount);
                ids[m] = "e" + e;
                names[m] = "Entity " + e;
            }
            String[] facts = new String[FACTS_PER_PASSAGE];
            for (int f = 0; f < facts.length; f++) {
                facts[f] = names[f] + " is related to " + names[(f + 1) % names.length];
            }
            long[] questions = random.nextInt(10) < 3 ? new long[] {arena.add(unitVector(random, dims))} : new long[0];
            out.add(new Synthetic(
                    passage,
                    arena.add(unitVector(random, dims)),
                    conversation ? "s" + document : null,
                    conversation ? 1_700_000_000_000L + 60_000L * i : Long.MIN_VALUE,
                    ids,
                    names,
                    facts,
                    questions));
        }
        return out;
    }

    /** An index in [0, n) drawn with a skew toward small ones, as words and entities are in text. */
    private static int skewed(Random random, int n) {
        double u = random.nextDouble();
        return (int) Math.min(n - 1, Math.floor(Math.pow(n, u)) - 1);
    }

    private static float[] unitVector(Random random, int dims) {
        float[] v = new float[dims];
        double norm = 0;
        for (int i = 0; i < dims; i++) {
            v[i] = (float) random.nextGaussian();
            norm += v[i] * v[i];
        }
        float inv = (float) (1 / Math.sqrt(norm));
        for (int i = 0; i < dims; i++) {
            v[i] *= inv;
        }
        return v;
    }
}
