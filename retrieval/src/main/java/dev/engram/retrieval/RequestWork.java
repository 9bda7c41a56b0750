package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * What the streams of one request share: the passage searches already made for a query vector, and the embedding of
 * several texts at once. A mode that fuses streams (hybrid: CogniRank's dense candidates and the dense stream) asks
 * for the same vector's nearest passages more than once; the second ask is served from the first. Never shared
 * between requests; a caller passes none and the query makes its own.
 */
public final class RequestWork {

    RequestWork() {}

    /** Helpers for embedding the texts of one request side by side; the requesting thread always takes part. */
    private static final int HELPERS = Math.max(1, Runtime.getRuntime().availableProcessors() - 1);

    private static final ExecutorService EMBEDDING = Executors.newFixedThreadPool(HELPERS, r -> {
        Thread t = new Thread(r, "engram-query-embedding");
        t.setDaemon(true);
        return t;
    });

    private record Search(VectorIndex index, int k, List<Retrieval.Scored> found) {}

    private final Map<float[], List<Search>> searches = new IdentityHashMap<>();

    /**
     * The {@code k} nearest passages to {@code vector} (by identity: the same array of the same request). A smaller
     * {@code k} than one already searched is served from the head of that search where that is exactly what a search
     * for it finds ({@link VectorIndex#headsAgreeUpTo}): always for the scan, for the graph index within its search
     * width.
     */
    synchronized List<Retrieval.Scored> nearestPassages(MemoryGraph g, float[] vector, int k) {
        List<Search> done = searches.computeIfAbsent(vector, v -> new ArrayList<>());
        for (Search s : done) {
            if (s.index() == g.passageSearch && s.k() >= k && s.k() <= g.passageSearch.headsAgreeUpTo()) {
                return new ArrayList<>(
                        s.found().subList(0, Math.min(k, s.found().size())));
            }
        }
        List<Retrieval.Scored> found = g.passageSearch.nearest(vector, k);
        done.add(new Search(g.passageSearch, k, List.copyOf(found)));
        return found;
    }

    /**
     * The vectors of {@code texts}, in order, embedded side by side: the requesting thread and up to one helper per
     * further core take the next text until none is left. A helper that has not started when the requesting thread
     * runs out of texts is called off, so a busy pool never makes a request wait for work it could do itself.
     */
    static List<float[]> embedAll(Function<String, float[]> embedder, List<String> texts) {
        int n = texts.size();
        float[][] out = new float[n][];
        AtomicInteger next = new AtomicInteger();
        Runnable take = () -> {
            for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                out[i] = embedder.apply(texts.get(i));
            }
        };
        List<Helper> helpers = new ArrayList<>();
        for (int h = 0; h < Math.min(HELPERS, n - 1); h++) {
            Helper helper = new Helper(take);
            helpers.add(helper);
            EMBEDDING.execute(helper);
        }
        try {
            take.run();
        } finally {
            // on a failure here too: no helper starts on a text of a request that has ended
            next.set(n);
            for (Helper h : helpers) {
                h.calledOff = h.claimed.compareAndSet(false, true);
            }
        }
        for (Helper helper : helpers) {
            if (helper.calledOff) {
                continue; // never started, and now never will: the requesting thread embedded its share
            }
            try {
                helper.done.join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException r) {
                    throw r;
                }
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw new IllegalStateException("embedding failed", e.getCause());
            }
        }
        if (Arrays.stream(out).anyMatch(v -> v == null)) {
            throw new IllegalStateException("a text was not embedded");
        }
        return Arrays.asList(out);
    }

    /** Takes texts on a helper thread, unless the requesting thread has called it off before it started. */
    private static final class Helper implements Runnable {
        private final Runnable take;
        private final AtomicBoolean claimed = new AtomicBoolean();
        private final CompletableFuture<Void> done = new CompletableFuture<>();
        /** Whether the requesting thread claimed it before it started (then it never runs); the requester's alone. */
        private boolean calledOff;

        Helper(Runnable take) {
            this.take = take;
        }

        @Override
        public void run() {
            if (!claimed.compareAndSet(false, true)) {
                return;
            }
            try {
                take.run();
                done.complete(null);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }
    }
}
