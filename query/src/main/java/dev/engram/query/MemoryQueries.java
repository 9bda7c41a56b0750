package dev.engram.query;

import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.Retrieval;
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.stores.DocumentGist;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.ReviewItem;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.ThemeSet;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.llm.Answerer;
import dev.engram.understanding.llm.LlmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/** Answers queries from this instance's local state stores. The caller has routed the namespace here. */
public final class MemoryQueries {

    private static final StringSerializer KEYS = new StringSerializer();

    private final KafkaStreams streams;
    private final Embedder embedder;
    private final GraphLoader graphs;
    private final EntityViews entityViews = new EntityViews(name -> store(name, Object.class));

    private final Function<String, List<String>> queryEntityNames;
    private Function<String, List<String>> decomposer;
    private Retrieval.Reasoner reasoner;

    /** The LLM agents of the {@code como} loop (null: evidence-only probing). */
    public void reasonWith(Retrieval.Reasoner reasoner) {
        this.reasoner = reasoner;
    }

    private Answerer answerer;

    /** Delivers an operator's command to the memory step (null: commands are not available). */
    public interface CommandSender {
        void send(MemoryCommand command) throws Exception;
    }

    private CommandSender commands;

    public void commandWith(CommandSender sender) {
        this.commands = sender;
    }

    /**
     * Records an operator's split, merge or clear of two surface entities on the memory-commands topic; the memory
     * step applies it in order with everything else of the namespace.
     */
    public Map<String, Object> command(String ns, MemoryCommand.Op op, String entityId, String otherId, String reason) {
        if (commands == null) {
            throw QueryException.notConfigured("this instance cannot write memory commands");
        }
        if (entityId.equals(otherId)) {
            throw QueryException.invalid("'entity_id' and 'other_id' must differ");
        }
        if (op != MemoryCommand.Op.CLEAR) {
            var entities = store(StateStores.MEMORY_ENTITIES.name(), EntityRecord.class);
            for (String id : List.of(entityId, otherId)) {
                if (entities.get(Keys.of(ns, id)) == null) {
                    throw QueryException.notFound("entity '" + id + "' is not in namespace '" + ns + "'");
                }
            }
        }
        MemoryCommand c = new MemoryCommand(ns, op, entityId, otherId, reason, java.time.Instant.now());
        try {
            commands.send(c);
        } catch (Exception e) {
            throw QueryException.unavailable("could not record the command: " + e.getMessage());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("status", "accepted");
        out.put("command", c);
        return out;
    }

    /** Answers questions from evidence with an LLM (null: answering is not available). */
    public void answerWith(Answerer answerer) {
        this.answerer = answerer;
    }

    public boolean canAnswer() {
        return answerer != null;
    }

    /** Retrieves evidence, then asks the LLM to answer from it with citations (CogitoRAG's passage–memory pairs). */
    @SuppressWarnings("unchecked")
    public Map<String, Object> answer(String ns, String query, String mode, int topK, Map<String, Double> params) {
        Map<String, Object> retrieved = retrieve(ns, query, mode, topK, params);
        List<Map<String, Object>> results = (List<Map<String, Object>>) retrieved.get("results");
        List<Answerer.Evidence> evidence = new ArrayList<>();
        for (Map<String, Object> r : results) {
            evidence.add(
                    new Answerer.Evidence((String) r.get("title"), (String) r.get("text"), (String) r.get("memory")));
        }
        Answerer.Answer a;
        try {
            a = answerer.answer(query, evidence);
        } catch (LlmException e) {
            throw QueryException.upstreamFailed("the LLM could not answer: " + e.getMessage());
        }
        List<Map<String, Object>> citations = new ArrayList<>();
        for (int n : a.citations()) {
            Map<String, Object> r = results.get(n - 1);
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("evidence", n);
            c.put("passage_id", r.get("passage_id"));
            c.put("document_id", r.get("document_id"));
            c.put("title", r.get("title"));
            citations.add(c);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("query", query);
        out.put("answer", a.text());
        out.put("citations", citations);
        out.put("evidence", results);
        out.put("usage", Map.of("prompt_tokens", a.promptTokens(), "completion_tokens", a.completionTokens()));
        out.put("mode", retrieved.get("mode"));
        out.put("watermark", retrieved.get("watermark"));
        return out;
    }

    /** Uses an LLM to split questions for decomposing modes (null: the rule-based split). */
    public void decomposeWith(Function<String, List<String>> decomposer) {
        this.decomposer = decomposer;
    }

    /**
     * @param queryEntityNames finds the entity names a query mentions (the embedded extractor, never an LLM call)
     */
    public MemoryQueries(
            KafkaStreams streams,
            Embedder embedder,
            Function<String, List<String>> queryEntityNames,
            GraphLoader graphs) {
        this.graphs = graphs;
        this.streams = streams;
        this.embedder = embedder;
        this.queryEntityNames = queryEntityNames;
    }

    public Map<String, Object> namespace(String ns) {
        NamespaceState state = namespaceState(ns)
                .orElseThrow(() -> QueryException.notFound("namespace '" + ns + "' has no memory yet"));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("documents", state.documents());
        out.put("passages", state.passages());
        out.put("entities", state.entities());
        out.put("surfaces", state.surfaces());
        // Kept by the memory step as statuses change: no scan of the namespace's documents.
        Map<String, Long> byStatus = new LinkedHashMap<>();
        state.documentsByStatus().forEach((status, n) -> byStatus.put(status.name(), n));
        out.put("documents_by_status", byStatus);
        out.put("watermark", watermark(state));
        return out;
    }

    public Map<String, Object> document(String ns, String id) {
        DocumentRecord doc = Optional.ofNullable(store(StateStores.MEMORY_DOCUMENTS.name(), DocumentRecord.class)
                        .get(Keys.of(ns, id)))
                .orElseThrow(() -> QueryException.notFound("document '" + id + "' is not in namespace '" + ns + "'"));
        ReadOnlyKeyValueStore<String, StoredPassage> passages =
                store(StateStores.MEMORY_PASSAGES.name(), StoredPassage.class);
        List<Map<String, Object>> items = new ArrayList<>();
        for (PassageRef ref : doc.passages()) {
            StoredPassage p = passages.get(Keys.of(ns, ref.passageId()));
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("passage_id", ref.passageId());
            item.put("content_hash", ref.contentHash());
            item.put("in_memory", p != null && p.contentHash().equals(ref.contentHash()));
            if (p != null) {
                item.put("ordinal", p.ordinal());
                item.put("headings", p.headings());
                item.put("start", p.start());
                item.put("end", p.end());
                item.put("text", p.text());
                item.put("memory", p.memory());
                item.put("entities", p.extraction().entities());
                item.put("facts", p.extraction().facts());
                item.put("questions", p.extraction().questions());
            }
            items.add(item);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("id", doc.id());
        out.put("version", doc.version());
        out.put("status", doc.status());
        out.put("title", doc.title());
        out.put("source", doc.source());
        out.put("metadata", doc.metadata());
        out.put("event_time", doc.eventTime());
        out.put("updated_at", doc.updatedAt());
        out.put("passages", items);
        namespaceState(ns).ifPresent(s -> out.put("watermark", watermark(s)));
        return out;
    }

    /**
     * Entities and facts verification rejected, oldest passages first, at most {@code limit}; and the entity pairs
     * resolution sent to review or deferred.
     */
    public Map<String, Object> reviews(String ns, int limit) {
        List<ReviewItem> items = new ArrayList<>();
        long total = 0;
        try (KeyValueIterator<String, ReviewItem> it =
                store(StateStores.MEMORY_REVIEWS.name(), ReviewItem.class).prefixScan(Keys.prefix(ns), KEYS)) {
            while (it.hasNext()) {
                ReviewItem r = it.next().value;
                total++;
                if (items.size() < limit) {
                    items.add(r);
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("total", total);
        out.put("reviews", items);
        out.put("entity_pairs", entityViews.pendingPairs(ns, limit));
        return out;
    }

    public Map<String, Object> entities(String ns, String name) {
        return entityViews.byName(ns, name);
    }

    public Map<String, Object> entity(String ns, String id) {
        Map<String, Object> view = entityViews.byId(ns, id);
        if (view == null) {
            throw QueryException.notFound("entity '" + id + "' is not in namespace '" + ns + "'");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.putAll(view);
        return out;
    }

    /** A document's gist and episodic windows. */
    public Map<String, Object> gist(String ns, String id) {
        DocumentGist g =
                store(StateStores.MEMORY_GISTS.name(), DocumentGist.class).get(Keys.of(ns, id));
        if (g == null) {
            throw QueryException.notFound("document '" + id + "' has no passages in memory in namespace '" + ns + "'");
        }
        ReadOnlyKeyValueStore<String, byte[]> vectors = store(StateStores.MEMORY_VECTORS.name(), byte[].class);
        DocumentGist.View view = GistViews.view(g, passageId -> {
            byte[] v = vectors.get(Keys.of(ns, passageId));
            return v == null ? null : dev.engram.schemas.VectorCodec.fromBytes(v);
        });
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("document_id", g.documentId());
        out.put("title", g.title());
        out.put("gist", view.gist());
        out.put("passages", g.entries().size());
        out.put("window_size", view.windowSize());
        out.put("windows", view.windows());
        out.put("updated_at", g.updatedAt());
        return out;
    }

    private ThemeSummarizer summarizer;
    private dev.engram.metrics.Meters meters;
    /** Abstractive theme summaries by (namespace, themes version, rank): written once per computed theme set. */
    private final java.util.Map<String, String> abstractive =
            java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                    return size() > 4096;
                }
            });

    /** Theme summaries by an LLM (null: the stored extractive ones). */
    public void summarizeWith(ThemeSummarizer summarizer, dev.engram.metrics.Meters meters) {
        this.summarizer = summarizer;
        this.meters = meters;
    }

    /** The namespace's eigen-themes (empty until enough passages have arrived). */
    public Map<String, Object> themes(String ns) {
        NamespaceState state = namespaceState(ns)
                .orElseThrow(() -> QueryException.notFound("namespace '" + ns + "' has no memory yet"));
        ThemeSet t = store(StateStores.MEMORY_THEMES.name(), ThemeSet.class).get(ns);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("computed_at_version", t == null ? null : t.version());
        out.put("computed_at", t == null ? null : t.computedAt());
        out.put("passages", t == null ? 0 : t.passages());
        out.put("essential", t == null ? 0 : t.essential());
        out.put("changes_since", state.changesSinceThemes());
        out.put("themes", t == null ? List.of() : summarized(ns, t));
        return out;
    }

    /**
     * The themes with their summaries: the stored extractive one, or with an LLM an abstractive one written from
     * the members' memories on first request (outside the memory step) and kept; a failed call keeps the stored one.
     */
    private List<Map<String, Object>> summarized(String ns, ThemeSet set) {
        ReadOnlyKeyValueStore<String, StoredPassage> passages =
                store(StateStores.MEMORY_PASSAGES.name(), StoredPassage.class);
        List<Map<String, Object>> out = new ArrayList<>();
        for (ThemeSet.Theme theme : set.themes()) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("rank", theme.rank());
            v.put("eigenvalue", theme.eigenvalue());
            v.put("passage_ids", theme.passageIds());
            v.put("weights", theme.weights());
            String summary = theme.summary();
            String kind = "extractive";
            if (summarizer != null) {
                String key = ns + Keys.SEPARATOR + set.version() + Keys.SEPARATOR + theme.rank();
                String written = abstractive.get(key);
                if (written == null) {
                    List<String> memories = new ArrayList<>();
                    for (String id : theme.passageIds()) {
                        StoredPassage p = passages.get(Keys.of(ns, id));
                        if (p != null && !p.memory().isBlank()) {
                            memories.add(p.memory());
                        }
                    }
                    try {
                        written = summarizer.summarize(memories);
                        abstractive.put(key, written);
                        meters.themeSummary("abstractive");
                    } catch (RuntimeException e) {
                        meters.themeSummary("failed");
                    }
                }
                if (written != null) {
                    summary = written;
                    kind = "abstractive";
                }
            }
            v.put("summary", summary);
            v.put("summary_kind", kind);
            v.put("questions", theme.questions());
            out.add(v);
        }
        return out;
    }

    public Map<String, Object> merges(String ns, int limit) {
        return entityViews.merges(ns, limit);
    }

    /**
     * Runs a retrieval mode over the namespace's memory graph. The query is embedded once per request; sub-queries
     * of decomposing modes are embedded on demand and cached for the request.
     */
    public Map<String, Object> retrieve(
            String ns, String query, String modeName, int topK, Map<String, Double> overrides) {
        long t0 = System.nanoTime();
        Retrieval.Mode mode;
        Retrieval.Params params;
        try {
            mode = Retrieval.mode(modeName);
            params = Retrieval.params(mode, overrides);
        } catch (IllegalArgumentException e) {
            throw QueryException.invalid(e.getMessage());
        }
        NamespaceState state = namespaceState(ns)
                .orElseThrow(() -> QueryException.notFound("namespace '" + ns + "' has no memory yet"));
        MemoryGraph graph = graphs.graph(ns, state, name -> store(name, Object.class));
        Map<String, float[]> embedded = new HashMap<>();
        Function<String, float[]> embed = text -> embedded.computeIfAbsent(text, embedder::embed);
        int[] queryEntities = !mode.usesQueryEntities()
                ? new int[0]
                : queryEntityNames.apply(query).stream()
                        .flatMap(n -> entityViews.resolvedIds(ns, n, false).stream())
                        .mapToInt(graph::entityIndex)
                        .filter(i -> i >= 0)
                        .distinct()
                        .toArray();
        // The snapshot may lag the stores by up to a second: rank with slack and drop passages that have since left
        // memory, so a deleted document is never served.
        Retrieval.Result result = mode.retrieve(
                graph,
                new Retrieval.Query(query, embed.apply(query), embed, queryEntities, decomposer, reasoner),
                params,
                topK * 2 + 10);
        ReadOnlyKeyValueStore<String, StoredPassage> live =
                store(StateStores.MEMORY_PASSAGES.name(), StoredPassage.class);
        List<Map<String, Object>> results = new ArrayList<>();
        for (Retrieval.Scored s : result.ranked()) {
            if (results.size() == topK) {
                break;
            }
            MemoryGraph.Passage p = graph.passage(s.passage());
            if (live.get(Keys.of(ns, p.id())) == null) {
                continue;
            }
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("rank", results.size() + 1);
            r.put("score", s.score());
            r.put("passage_id", p.id());
            r.put("document_id", p.documentId());
            r.put("title", p.title());
            r.put("headings", p.headings());
            r.put("text", p.text());
            r.put("memory", p.memory());
            r.put("start", p.start());
            r.put("end", p.end());
            results.add(r);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("namespace", ns);
        out.put("mode", mode.name());
        out.put("query", query);
        out.put("top_k", topK);
        out.put("params", params.values());
        out.put("results", results);
        out.put("explanation", result.explanation());
        out.put("vector_search", graph.vectorSearch());
        Map<String, Object> watermark = watermark(state);
        watermark.put("graph_version", graph.version());
        out.put("watermark", watermark);
        out.put("took_ms", (System.nanoTime() - t0) / 1e6);
        return out;
    }

    public Optional<NamespaceState> namespaceState(String ns) {
        return Optional.ofNullable(store(StateStores.MEMORY_NAMESPACES.name(), NamespaceState.class)
                .get(ns));
    }

    private static Map<String, Object> watermark(NamespaceState s) {
        Map<String, Object> w = new LinkedHashMap<>();
        w.put("version", s.version());
        w.put("partition", s.inputPartition());
        w.put("offset", s.inputOffset());
        w.put("updated_at", s.updatedAt());
        return w;
    }

    private <V> ReadOnlyKeyValueStore<String, V> store(String name, Class<V> valueType) {
        try {
            return streams.store(
                    StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.<String, V>keyValueStore()));
        } catch (InvalidStateStoreException e) {
            throw QueryException.unavailable("store " + name + " is not queryable yet (" + e.getMessage() + ")");
        }
    }
}
