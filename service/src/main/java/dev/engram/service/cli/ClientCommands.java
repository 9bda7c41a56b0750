package dev.engram.service.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.engram.schemas.Json;
import dev.engram.service.app.DocumentWriter;
import dev.engram.stores.Hashing;
import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The client commands of {@code ./engram}, over the HTTP API of a running instance ({@code --url}, or
 * {@code ENGRAM_URL}, default {@code http://localhost:8080}; the API key from {@code ENGRAM_API_KEY}):
 *
 * <ul>
 *   <li>{@code ingest --namespace NS PATH...}: every text, Markdown, HTML and PDF file (one document each, its id the
 *       path below the argument) and every line of every {@code .jsonl} file ({@code {"id", "title", "text",
 *       "source", "metadata"}}) is written with {@code PUT ...?wait=verified}, a few at a time, with a progress line;
 *       what a run got into memory is remembered in {@code .engram/ingest/NS.json}, so the next run sends only what
 *       changed.
 *   <li>{@code query --namespace NS [--mode M] [--top-k K] [--json true] TEXT...}: a retrieval, as a table or JSON.
 *   <li>{@code status [--namespace NS]}: the instance's health and the namespace's documents by status.
 * </ul>
 *
 * Exit codes: 0 done, 1 some documents were refused or a request failed, 2 a usage error, 3 some documents were not in
 * memory as sent when the wait ended (not yet, or a later write of the same id from elsewhere replaced them), 4 no
 * instance answers at the URL.
 */
public final class ClientCommands {

    static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;
    static final int NOT_YET = 3;
    public static final int UNREACHABLE = 4;

    private static final Duration WAIT = Duration.ofMinutes(5);

    private final String url;
    private final String key;
    private final PrintStream out;
    private final PrintStream err;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ClientCommands(String url, String key, PrintStream out, PrintStream err) {
        this.url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        this.key = key == null || key.isBlank() ? null : key;
        this.out = out;
        this.err = err;
    }

    /** What the service takes as a namespace. */
    static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    /**
     * Sends every document under {@code paths} to {@code ns}, {@code concurrency} at a time, and waits for each to be
     * in memory; {@code state} (null: {@code .engram/ingest/NS.json}) remembers what earlier runs got there.
     */
    int ingest(String ns, int concurrency, Path state, List<String> paths) throws IOException, InterruptedException {
        List<IngestFiles.Item> items = new ArrayList<>();
        for (String arg : paths) {
            IngestFiles.collect(Path.of(arg), items);
        }
        Path statePath = state != null ? state : Path.of(".engram", "ingest", ns + ".json");
        Map<String, String> done = readState(statePath);
        List<IngestFiles.Item> toSend = new ArrayList<>();
        int unchanged = 0;
        int refused = 0;
        Map<String, String> seen = new HashMap<>();
        for (IngestFiles.Item item : items) {
            String first = item.problem() == null ? seen.putIfAbsent(item.id(), item.where()) : null;
            if (item.problem() != null || first != null) {
                err.println("  refused " + item.where() + ": "
                        + (item.problem() != null ? item.problem() : "id '" + item.id() + "' is also " + first));
                refused++;
            } else if (hash(item).equals(done.get(item.id()))) {
                unchanged++;
            } else {
                toSend.add(item);
            }
        }
        health(); // fail fast, with a clear message, when nothing answers
        out.printf(
                Locale.ROOT,
                "engram ingest: %d documents in %s: %d to send, %d unchanged since the last run%n",
                items.size(),
                String.join(" ", paths),
                toSend.size(),
                unchanged);
        Progress progress = new Progress(ns, toSend.size());
        AtomicInteger inMemory = new AtomicInteger();
        AtomicInteger notYet = new AtomicInteger();
        AtomicInteger superseded = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger(refused);
        Map<String, String> reached = new ConcurrentHashMap<>(done);
        ExecutorService pool = Executors.newFixedThreadPool(concurrency);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (IngestFiles.Item item : toSend) {
                futures.add(pool.submit(() -> {
                    try {
                        HttpResponse<String> r = send(
                                "PUT",
                                "/v1/namespaces/" + DocumentWriter.segment(ns) + "/documents/"
                                        + DocumentWriter.segment(item.id()) + "?wait=verified&timeout_ms="
                                        + WAIT.toMillis(),
                                Json.mapper().writeValueAsString(item.body()));
                        if (r.statusCode() == 200) {
                            reached.put(item.id(), hash(item));
                            inMemory.incrementAndGet();
                            progress.done();
                        } else if (r.statusCode() == 202 && superseded(r)) {
                            reached.remove(item.id()); // what an earlier run sent is no longer what memory holds
                            superseded.incrementAndGet();
                            progress.done();
                            err.println(
                                    "  replaced in memory by a later write of id '" + item.id() + "': " + item.where());
                        } else if (r.statusCode() == 202) {
                            reached.remove(item.id());
                            notYet.incrementAndGet();
                            progress.done();
                            err.println("  not yet in memory: " + item.where());
                        } else {
                            failed.incrementAndGet();
                            progress.done();
                            err.println("  refused " + item.where() + ": HTTP " + r.statusCode() + " " + message(r));
                        }
                    } catch (IOException e) {
                        failed.incrementAndGet();
                        progress.done();
                        err.println("  failed " + item.where() + ": " + e);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return null;
                }));
            }
            long saved = System.nanoTime();
            while (!futures.stream().allMatch(Future::isDone)) {
                progress.print(this);
                Thread.sleep(500);
                if (System.nanoTime() - saved > 5_000_000_000L) {
                    writeState(statePath, reached); // an interrupted run keeps what it got into memory
                    saved = System.nanoTime();
                }
            }
        } finally {
            pool.shutdownNow();
            writeState(statePath, reached);
        }
        progress.print(this);
        progress.finish();
        out.printf(
                Locale.ROOT,
                "engram ingest: %d in memory, %d unchanged, %d not yet in memory, %d replaced by later writes,"
                        + " %d refused or failed%n",
                inMemory.get(),
                unchanged,
                notYet.get(),
                superseded.get(),
                failed.get());
        return failed.get() > 0 ? FAILED : notYet.get() + superseded.get() > 0 ? NOT_YET : OK;
    }

    /** Whether a write's answer says memory holds a later write of the document instead (see {@code DocumentWriter}). */
    private static boolean superseded(HttpResponse<String> r) {
        try {
            return Json.mapper().readTree(r.body()).path("superseded").asBoolean(false);
        } catch (IOException e) {
            return false;
        }
    }

    private static String hash(IngestFiles.Item item) {
        return Hashing.sha256Hex(item.body().toString());
    }

    private Map<String, String> readState(Path statePath) throws IOException {
        Map<String, String> out = new TreeMap<>();
        if (!Files.exists(statePath)) {
            return out;
        }
        JsonNode state;
        try {
            state = Json.mapper().readTree(statePath.toFile());
        } catch (IOException e) {
            throw new IOException("cannot read the state file " + statePath + " (" + describe(e) + ")", e);
        }
        if (!url.equals(state.path("url").asText())) {
            return out; // another instance's memory: send everything
        }
        state.path("documents")
                .properties()
                .forEach(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    private void writeState(Path statePath, Map<String, String> reached) throws IOException {
        try {
            writeStateFile(statePath, reached);
        } catch (IOException e) {
            throw new IOException("cannot write the state file " + statePath + " (" + describe(e) + ")", e);
        }
    }

    /** What went wrong with a file, in words. */
    private static String describe(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "no such file or directory: " + e.getMessage();
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied: " + e.getMessage();
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason() + ": " + f.getFile();
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    private void writeStateFile(Path statePath, Map<String, String> reached) throws IOException {
        Files.createDirectories(statePath.toAbsolutePath().getParent());
        ObjectNode state = Json.mapper().createObjectNode();
        state.put("url", url);
        ObjectNode documents = state.putObject("documents");
        new TreeMap<>(reached).forEach(documents::put);
        Path tmp = Files.createTempFile(
                statePath.toAbsolutePath().getParent(), statePath.getFileName().toString(), ".tmp");
        Files.write(tmp, Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsBytes(state));
        Files.move(tmp, statePath, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Documents written so far, and the namespace's passages, as a line that rewrites itself on a terminal. */
    private final class Progress {
        private final String ns;
        private final int total;
        private final AtomicInteger completed = new AtomicInteger();
        private final long t0 = System.nanoTime();
        private long passagesAtStart = -1;
        private final boolean terminal = System.console() != null;
        private long lastLine;

        Progress(String ns, int total) {
            this.ns = ns;
            this.total = total;
        }

        void done() {
            completed.incrementAndGet();
        }

        void print(ClientCommands c) {
            long now = System.nanoTime();
            if (!terminal && now - lastLine < 5_000_000_000L && completed.get() < total) {
                return;
            }
            lastLine = now;
            long passages = c.passages(ns);
            if (passagesAtStart < 0) {
                passagesAtStart = passages;
            }
            double seconds = Math.max(1e-3, (now - t0) / 1e9);
            int n = completed.get();
            double perSecond = (passages - passagesAtStart) / seconds;
            String eta = n == 0 ? "?" : String.format(Locale.ROOT, "%.0f s", seconds / n * (total - n));
            int width = 30;
            int filled = total == 0 ? width : width * n / total;
            String line = String.format(
                    Locale.ROOT,
                    "[%s%s] %d/%d documents, %d passages understood, %.1f passages/s, ETA %s",
                    "#".repeat(filled),
                    ".".repeat(width - filled),
                    n,
                    total,
                    Math.max(0, passages - passagesAtStart),
                    perSecond,
                    eta);
            c.err.print(terminal ? "\r" + line : line + "\n");
            c.err.flush();
        }

        void finish() {
            if (terminal) {
                err.println();
            }
        }
    }

    /** The namespace's passages in memory, or 0 while it has none. */
    private long passages(String ns) {
        try {
            HttpResponse<String> r = send("GET", "/v1/namespaces/" + DocumentWriter.segment(ns), null);
            return r.statusCode() == 200
                    ? Json.mapper().readTree(r.body()).path("passages").asLong()
                    : 0;
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    /** Retrieves the passages of {@code ns} that best answer {@code question}: a table, or the API's JSON. */
    int query(String ns, String mode, int topK, boolean json, List<String> question)
            throws IOException, InterruptedException {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("query", String.join(" ", question));
        body.put("mode", mode);
        body.put("top_k", topK);
        HttpResponse<String> r =
                send("POST", "/v1/namespaces/" + DocumentWriter.segment(ns) + "/retrieve", body.toString());
        if (r.statusCode() != 200) {
            err.println("engram query: HTTP " + r.statusCode() + " " + message(r));
            return FAILED;
        }
        if (json) {
            out.println(r.body());
            return OK;
        }
        JsonNode reply = Json.mapper().readTree(r.body());
        out.printf(Locale.ROOT, "%-4s %-7s %-28s %s%n", "rank", "score", "document", "passage");
        for (JsonNode hit : reply.path("results")) {
            String text = hit.path("memory").asText(hit.path("text").asText()).replaceAll("\\s+", " ");
            out.printf(
                    Locale.ROOT,
                    "%-4d %-7.3f %-28s %s%n",
                    hit.path("rank").asInt(),
                    hit.path("score").asDouble(),
                    abbreviate(hit.path("title").asText(hit.path("document_id").asText()), 28),
                    abbreviate(text, 100));
        }
        out.printf(
                Locale.ROOT,
                "%d results, mode %s, %.1f ms, served by %s%n",
                reply.path("results").size(),
                reply.path("mode").asText(),
                reply.path("took_ms").asDouble(),
                reply.path("served_by").asText());
        return OK;
    }

    /** The instance's health and pipeline; with {@code ns} (or null), the namespace's documents by status. */
    int status(String ns) throws IOException, InterruptedException {
        JsonNode health = health();
        out.printf(
                Locale.ROOT,
                "instance %s: %s (serving %s, ready %s); streams %s, ingest %s; extractor %s, embedder %s%n",
                health.path("instance").asText(),
                health.path("status").asText(),
                health.path("serving").asBoolean(),
                health.path("ready").asBoolean(),
                health.path("streams_state").asText(),
                health.path("ingest_state").asText(),
                health.path("extractor").asText(),
                health.path("embedder").asText());
        HttpResponse<String> scrape = send("GET", "/metrics", null);
        if (scrape.statusCode() == 200) {
            Pipeline p = Pipeline.of(scrape.body());
            out.printf(
                    Locale.ROOT,
                    "pipeline: ingest %.0f records behind, memory %.0f behind; documents read: %s; dead letters: %s;"
                            + " sinks: %s%n",
                    p.ingestLag(),
                    p.memoryLag(),
                    p.documents().isEmpty() ? "none" : p.documents(),
                    p.deadLetters().isEmpty() ? "none" : p.deadLetters(),
                    p.sinks());
        }
        if (ns == null) {
            return health.path("serving").asBoolean() ? OK : FAILED;
        }
        HttpResponse<String> r = send("GET", "/v1/namespaces/" + DocumentWriter.segment(ns), null);
        if (r.statusCode() != 200) {
            err.println("engram status: namespace " + ns + ": HTTP " + r.statusCode() + " " + message(r));
            return FAILED;
        }
        JsonNode stats = Json.mapper().readTree(r.body());
        StringBuilder byStatus = new StringBuilder();
        stats.path("documents_by_status").properties().forEach(e -> byStatus.append(byStatus.isEmpty() ? "" : ", ")
                .append(e.getKey().toLowerCase(Locale.ROOT))
                .append(' ')
                .append(e.getValue().asLong()));
        out.printf(
                Locale.ROOT,
                "namespace %s: %d documents (%s), %d passages, %d entities; memory version %d%n",
                ns,
                stats.path("documents").asLong(),
                byStatus,
                stats.path("passages").asLong(),
                stats.path("entities").asLong(),
                stats.path("watermark").path("version").asLong());
        return OK;
    }

    /** What the instance's metrics say of its pipeline: how far each stream step is behind its input, and outcomes. */
    record Pipeline(
            double ingestLag,
            double memoryLag,
            Map<String, Long> documents,
            Map<String, Long> deadLetters,
            String sinks) {

        private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)$");
        private static final Pattern LABEL = Pattern.compile("(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

        /** From the Prometheus text of {@code /metrics}: records lag per step, documents and dead letters by kind. */
        static Pipeline of(String prometheus) {
            double ingest = 0;
            double memory = 0;
            Map<String, Long> documents = new TreeMap<>();
            Map<String, Long> dead = new TreeMap<>();
            double sinkLag = 0;
            double paused = 0;
            boolean sink = false;
            for (String line : prometheus.split("\n")) {
                Matcher m = SAMPLE.matcher(line.strip());
                if (line.startsWith("#") || !m.matches()) {
                    continue;
                }
                String name = m.group(1);
                Map<String, String> labels = new TreeMap<>();
                if (m.group(3) != null) {
                    Matcher l = LABEL.matcher(m.group(3));
                    while (l.find()) {
                        labels.put(l.group(1), l.group(2));
                    }
                }
                double value;
                try {
                    value = Double.parseDouble(m.group(4));
                } catch (NumberFormatException e) {
                    continue;
                }
                if (Double.isNaN(value)) {
                    continue;
                }
                String client = labels.getOrDefault("client_id", "");
                switch (name) {
                    case "kafka_consumer_fetch_manager_records_lag_max" -> {
                        if (client.contains("StreamThread") && !client.contains("global")) {
                            if (client.contains("-ingest-")) {
                                ingest = Math.max(ingest, value);
                            } else {
                                memory = Math.max(memory, value);
                            }
                        }
                    }
                    case "engram_documents_total" ->
                        documents.merge(labels.getOrDefault("outcome", "?"), (long) value, Long::sum);
                    case "engram_dead_letters_total" ->
                        dead.merge(labels.getOrDefault("stage", "?"), (long) value, Long::sum);
                    case "engram_sink_lag_records" -> {
                        sink = true;
                        sinkLag += value;
                    }
                    case "engram_sink_paused" -> {
                        sink = true;
                        paused += value;
                    }
                    default -> {}
                }
            }
            documents.values().removeIf(v -> v == 0);
            dead.values().removeIf(v -> v == 0);
            String sinks = sink
                    ? String.format(Locale.ROOT, "%.0f mirror records behind, %.0f partitions paused", sinkLag, paused)
                    : "none on this instance";
            return new Pipeline(ingest, memory, documents, dead, sinks);
        }
    }

    private JsonNode health() throws IOException, InterruptedException {
        HttpResponse<String> r = send("GET", "/v1/health", null);
        return Json.mapper().readTree(r.body());
    }

    private HttpResponse<String> send(String method, String path, String json)
            throws IOException, InterruptedException {
        return ApiCalls.send(http, url, method, path, json, key, WAIT.plusMinutes(1));
    }

    private static String message(HttpResponse<String> r) {
        try {
            return Json.mapper()
                    .readTree(r.body())
                    .path("error")
                    .path("message")
                    .asText(r.body());
        } catch (IOException e) {
            return abbreviate(r.body(), 200);
        }
    }

    private static String abbreviate(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "…";
    }
}
