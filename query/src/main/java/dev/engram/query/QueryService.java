package dev.engram.query;

import dev.engram.metrics.Meters;
import dev.engram.query.Responses.Watermark;
import dev.engram.retrieval.MemoryGraph;
import dev.engram.retrieval.Passage;
import dev.engram.retrieval.RecentLayer;
import dev.engram.retrieval.Retrieval;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.UnderstandingEvent.PassageRef;
import dev.engram.stores.DocumentGist;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.ReviewItem;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.ThemeSet;
import dev.engram.understanding.Embedder;
import dev.engram.understanding.llm.Answerer;
import dev.engram.understanding.llm.FairPermits;
import dev.engram.understanding.llm.LlmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.QueryableStoreTypes;

/**
 * Answers queries from this instance's local state stores; the caller has routed the namespace here. Failures are
 * {@link QueryException}s that say what went wrong, not how a protocol reports it.
 */
public final class QueryService {

    /** Abstractive theme summaries kept in memory (by namespace, theme-set version and rank). */
    private static final int SUMMARY_CACHE = 4096;

    /** Delivers an operator's command to the memory step. */
    @FunctionalInterface
    public interface CommandSender {
        void send(MemoryCommand command) throws Exception;
    }

    /**
     * What an LLM adds to queries, each optional (null: without it): CogitoRAG's query decomposition (of a question
     * in a namespace), ComoRAG's agents, answers with citations, and abstractive theme summaries.
     */
    public record Llm(
            BiFunction<String, String, List<String>> decomposer,
            Retrieval.Reasoner reasoner,
            Answerer answerer,
            ThemeSummarizer summarizer) {

        public static Llm none() {
            return new Llm(null, null, null, null);
        }
    }

    private final Function<String, MemoryReader> memories;
    private final Embedder embedder;
    private final Function<String, List<String>> queryEntityNames;
    private final GraphLoader graphs;
    private final CommandSender commands;
    private final Llm llm;
    private final Meters meters;
    private final Clock clock;
    private final Map<String, String> abstractive = Collections.synchronizedMap(new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > SUMMARY_CACHE;
        }
    });

    /**
     * @param memories this instance's memory stores of a namespace
     * @param queryEntityNames finds the entity names a query mentions (the embedded extractor, never an LLM call)
     * @param commands where operators' commands go (null: commands are not available on this instance)
     */
    public QueryService(
            Function<String, MemoryReader> memories,
            Embedder embedder,
            Function<String, List<String>> queryEntityNames,
            GraphLoader graphs,
            CommandSender commands,
            Llm llm,
            Meters meters,
            Clock clock) {
        this.memories = memories;
        this.embedder = embedder;
        this.queryEntityNames = queryEntityNames;
        this.graphs = graphs;
        this.commands = commands;
        this.llm = llm;
        this.meters = meters;
        this.clock = clock;
    }

    /**
     * The stores of a namespace on a Kafka Streams instance: those of the one partition that holds it. While that
     * partition is not active and running here (starting, restoring, moving after a rebalance) they are
     * {@link QueryException.Kind#UNAVAILABLE}, never an empty answer from the stores of other partitions.
     */
    public static Function<String, MemoryReader> memoryOf(KafkaStreams streams) {
        return memoryOf(new NamespaceLocator(streams));
    }

    /** {@link #memoryOf(KafkaStreams)} through a locator. */
    public static Function<String, MemoryReader> memoryOf(NamespaceLocator locator) {
        KafkaStreams streams = locator.streams();
        return ns -> {
            int partition = locator.partitionOf(ns);
            if (partition < 0) {
                throw QueryException.unavailable("the partition of namespace '" + ns + "' is not known yet");
            }
            return new MemoryReader(name -> {
                try {
                    return streams.store(StoreQueryParameters.fromNameAndType(
                                    name, QueryableStoreTypes.<String, Object>keyValueStore())
                            .withPartition(partition));
                } catch (InvalidStateStoreException e) {
                    throw QueryException.unavailable("store " + name + " of namespace '" + ns
                            + "' is not queryable here yet (" + e.getMessage() + ")");
                }
            });
        };
    }

    private MemoryReader memory(String ns) {
        return memories.apply(ns);
    }

    private EntityViews views(String ns) {
        return new EntityViews(memory(ns));
    }

    /** Refuses at once when no LLM can answer, before any work or forwarding. */
    public void requireAnswering() {
        if (llm.answerer() == null) {
            throw QueryException.notConfigured(
                    "answering needs an LLM: set ENGRAM_UNDERSTANDING=llm, ENGRAM_LLM_BASE_URL and ENGRAM_LLM_MODEL");
        }
    }

    public Responses.Namespace namespace(String ns) {
        NamespaceState state = state(ns);
        // Kept by the memory step as statuses change: no scan of the namespace's documents.
        Map<String, Long> byStatus = new LinkedHashMap<>();
        state.documentsByStatus().forEach((status, n) -> byStatus.put(status.name(), n));
        return new Responses.Namespace(
                ns,
                state.documents(),
                state.passages(),
                state.entities(),
                state.surfaces(),
                byStatus,
                watermark(state, null));
    }

    /** The stored record of a document, for a writer waiting until memory holds its version. */
    public Optional<DocumentRecord> documentRecord(String ns, String id) {
        return memory(ns).document(ns, id);
    }

    /**
     * A page of the namespace's documents in id order: up to {@code limit} after the document {@code after} (from
     * the first when null), with {@code status} (any when null); the next page starts after the last one listed.
     */
    public Responses.DocumentList documents(String ns, DocumentStatus status, int limit, String after) {
        List<DocumentRecord> page = memory(ns).documents(ns, after, limit, status);
        String next = page.size() < limit ? null : page.get(page.size() - 1).id();
        return new Responses.DocumentList(ns, status, summaries(page), next);
    }

    /** The {@code limit} most recently updated documents, newest first: one page, no cursor. */
    public Responses.DocumentList recentDocuments(String ns, DocumentStatus status, int limit) {
        return new Responses.DocumentList(ns, status, summaries(memory(ns).recentDocuments(ns, limit, status)), null);
    }

    private static List<Responses.DocumentSummary> summaries(List<DocumentRecord> page) {
        return page.stream()
                .map(d -> new Responses.DocumentSummary(
                        d.id(),
                        d.status(),
                        d.version(),
                        d.title(),
                        d.source(),
                        d.passages().size(),
                        d.present(),
                        d.updatedAt()))
                .toList();
    }

    public Responses.Document document(String ns, String id) {
        MemoryReader memory = memory(ns);
        DocumentRecord doc = memory.document(ns, id)
                .orElseThrow(() -> QueryException.notFound("document '" + id + "' is not in namespace '" + ns + "'"));
        List<Responses.DocumentPassage> items = new ArrayList<>();
        for (PassageRef ref : doc.passages()) {
            StoredPassage p = memory.passage(ns, ref.passageId()).orElse(null);
            boolean inMemory = p != null && p.contentHash().equals(ref.contentHash());
            items.add(
                    p == null
                            ? new Responses.DocumentPassage(
                                    ref.passageId(),
                                    ref.contentHash(),
                                    false,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null,
                                    null)
                            : new Responses.DocumentPassage(
                                    ref.passageId(),
                                    ref.contentHash(),
                                    inMemory,
                                    p.ordinal(),
                                    p.headings(),
                                    p.start(),
                                    p.end(),
                                    p.text(),
                                    p.memory(),
                                    p.extraction().entities(),
                                    p.extraction().facts(),
                                    p.extraction().questions(),
                                    p.extraction().extractor(),
                                    p.extraction().construction()));
        }
        return new Responses.Document(
                ns,
                doc.id(),
                doc.version(),
                doc.status(),
                doc.title(),
                doc.source(),
                doc.metadata(),
                doc.eventTime(),
                doc.updatedAt(),
                doc.notes(),
                items,
                memory.namespace(ns).map(s -> watermark(s, null)).orElse(null));
    }

    /**
     * Entities and facts verification rejected, oldest passages first, at most {@code limit}; and the entity pairs
     * resolution sent to review or deferred.
     */
    public Responses.Reviews reviews(String ns, int limit) {
        MemoryReader.Page<ReviewItem> page = memory(ns).reviews(ns, limit);
        return new Responses.Reviews(ns, page.total(), page.items(), views(ns).pendingPairs(ns, limit));
    }

    public Responses.EntitiesByName entities(String ns, String name) {
        return new Responses.EntitiesByName(ns, name, views(ns).byName(ns, name));
    }

    /** The entity with {@code limit} of the passages that mention it, after passage {@code after} (null: the first). */
    public Responses.EntityInNamespace entity(String ns, String id, String after, int limit) {
        return views(ns)
                .byId(ns, id, after, limit)
                .map(e -> new Responses.EntityInNamespace(ns, e))
                .orElseThrow(() -> QueryException.notFound("entity '" + id + "' is not in namespace '" + ns + "'"));
    }

    /** The resolved entities whose meaning (their embeddings) is nearest {@code text}, nearest first. */
    public Responses.EntitiesLike entitiesLike(String ns, String text, int limit) {
        MemoryReader memory = memory(ns);
        MemoryGraph graph = graphs.graph(ns, state(ns), memory);
        EntityViews views = new EntityViews(memory);
        List<Responses.Entity> found = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (String id : graph.nearestEntities(embedder.embed(text), limit * 2)) {
            views.byId(ns, id).filter(e -> seen.add(e.id())).ifPresent(found::add);
            if (found.size() == limit) {
                break;
            }
        }
        return new Responses.EntitiesLike(ns, text, found);
    }

    /**
     * The relation types the namespace's facts use, with the passages each occurs in, most used first: a type is
     * {@code established} once it recurs in {@code establishedAfter} passages, {@code proposed} before (the schema the
     * namespace discovers as it grows). Counted from the namespace's query snapshot, as fresh as its retrievals.
     */
    public Responses.RelationTypes relationTypes(String ns, int limit, int establishedAfter) {
        MemoryReader memory = memory(ns);
        Map<String, Integer> passages = graphs.graph(ns, state(ns), memory).relationTypes();
        List<Responses.RelationType> types = passages.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue()
                        .reversed()
                        .thenComparing(Map.Entry.comparingByKey()))
                .limit(limit)
                .map(e -> new Responses.RelationType(
                        e.getKey(), e.getValue(), e.getValue() >= establishedAfter ? "established" : "proposed"))
                .toList();
        return new Responses.RelationTypes(ns, passages.size(), establishedAfter, types);
    }

    public Responses.Merges merges(String ns, int limit) {
        return views(ns).merges(ns, limit);
    }

    /** A document's gist and episodic windows. */
    public Responses.Gist gist(String ns, String id) {
        MemoryReader memory = memory(ns);
        DocumentGist g = memory.gist(ns, id)
                .orElseThrow(() -> QueryException.notFound(
                        "document '" + id + "' has no passages in memory in namespace '" + ns + "'"));
        DocumentGist.View view = GistViews.view(g, passageId -> memory.passageVector(ns, passageId));
        return new Responses.Gist(
                ns,
                g.documentId(),
                g.title(),
                view.gist(),
                g.entries().size(),
                view.windowSize(),
                view.windows(),
                g.updatedAt());
    }

    /** The namespace's eigen-themes (empty until enough passages have arrived). */
    public Responses.Themes themes(String ns) {
        NamespaceState state = state(ns);
        ThemeSet t = memory(ns).themes(ns).orElse(null);
        return new Responses.Themes(
                ns,
                t == null ? null : t.version(),
                t == null ? null : t.computedAt(),
                t == null ? 0 : t.passages(),
                t == null ? 0 : t.essential(),
                state.changesSinceThemes(),
                t == null ? List.of() : summarized(ns, t));
    }

    /**
     * The themes with their summaries: the stored extractive one, or with an LLM an abstractive one written from
     * the members' memories on first request (outside the memory step) and kept; a failed call keeps the stored one.
     */
    private List<Responses.Theme> summarized(String ns, ThemeSet set) {
        MemoryReader memory = memory(ns);
        List<Responses.Theme> out = new ArrayList<>();
        for (ThemeSet.Theme theme : set.themes()) {
            String summary = theme.summary();
            String kind = "extractive";
            if (llm.summarizer() != null) {
                // the members are part of the key: a theme a retracted passage left is summarized anew
                String key = Keys.of(
                        ns,
                        Long.toString(set.version()),
                        Integer.toString(theme.rank()),
                        String.join(",", theme.passageIds()));
                String written = abstractive.get(key);
                if (written == null) {
                    List<String> memories = new ArrayList<>();
                    for (String id : theme.passageIds()) {
                        memory.passage(ns, id)
                                .filter(p -> !p.memory().isBlank())
                                .ifPresent(p -> memories.add(p.memory()));
                    }
                    try {
                        written = llm.summarizer().summarize(memories);
                        abstractive.put(key, written);
                        meters.themeSummary(Meters.ThemeSummaryKind.ABSTRACTIVE);
                    } catch (RuntimeException e) {
                        meters.themeSummary(Meters.ThemeSummaryKind.FAILED);
                    }
                }
                if (written != null) {
                    summary = written;
                    kind = "abstractive";
                }
            }
            out.add(new Responses.Theme(
                    theme.rank(),
                    theme.eigenvalue(),
                    theme.passageIds(),
                    theme.weights(),
                    summary,
                    kind,
                    theme.questions()));
        }
        return out;
    }

    /**
     * Records an operator's split, merge or clear of two surface entities on the memory-commands topic; the memory
     * step applies it in order with everything else of the namespace.
     */
    public Responses.CommandAccepted command(
            String ns, MemoryCommand.Op op, String entityId, String otherId, String reason) {
        if (commands == null) {
            throw QueryException.notConfigured("this instance cannot write memory commands");
        }
        if (entityId.equals(otherId)) {
            throw QueryException.invalid("'entity_id' and 'other_id' must differ");
        }
        // a decision may be cleared for entities memory no longer holds, but only in a namespace that has memory
        state(ns);
        if (op != MemoryCommand.Op.CLEAR) {
            for (String id : List.of(entityId, otherId)) {
                if (memory(ns).entity(ns, id).isEmpty()) {
                    throw QueryException.notFound("entity '" + id + "' is not in namespace '" + ns + "'");
                }
            }
        }
        MemoryCommand c = new MemoryCommand(ns, op, entityId, otherId, reason, clock.instant());
        try {
            commands.send(c);
        } catch (Exception e) {
            throw QueryException.unavailable("could not record the command: " + e.getMessage());
        }
        return new Responses.CommandAccepted(ns, "accepted", c);
    }

    /**
     * Runs a retrieval mode over the namespace's memory graph. The query is embedded once per request; sub-queries
     * of decomposing modes are embedded on demand and cached for the request.
     */
    public Responses.Retrieved retrieve(
            String ns, String query, String modeName, int topK, Map<String, Double> overrides) {
        // the model calls a mode makes (decomposition, agents) take the namespace's fair share of the LLM
        return FairPermits.as(ns, () -> retrieveAs(ns, query, modeName, topK, overrides));
    }

    private Responses.Retrieved retrieveAs(
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
        MemoryReader memory = memory(ns);
        NamespaceState state = state(ns);
        GraphLoader.Layers layers = graphs.layers(ns, state, memory);
        MemoryGraph graph = layers.base();
        // sub-queries and probes of one request may be embedded side by side
        Map<String, float[]> embedded = new ConcurrentHashMap<>();
        Function<String, float[]> embed = text -> {
            float[] v = embedded.get(text);
            if (v == null) {
                v = embedder.embed(text);
                float[] first = embedded.putIfAbsent(text, v);
                v = first != null ? first : v;
            }
            return v;
        };
        List<String> queryEntities = !mode.usesQueryEntities()
                ? List.of()
                : queryEntityNames.apply(query).stream()
                        .flatMap(n -> new EntityViews(memory).resolvedIds(ns, n, false).stream())
                        .distinct()
                        .toList();
        // The snapshot may lag the stores by up to a second: rank with slack and drop passages that have since left
        // memory, so a deleted document is never served.
        int ranked = topK * 2 + 10;
        MemoryGraph recent = layers.recent();
        Set<String> changed = layers.changed();
        RecentLayer.Ranked result = RecentLayer.retrieve(
                mode,
                params,
                ranked,
                graph,
                query(ns, query, embed, queryEntities, graph, memory, changed)
                        .withDecomposer(
                                llm.decomposer() == null
                                        ? null
                                        : question -> llm.decomposer().apply(ns, question))
                        .withReasoner(llm.reasoner()),
                recent,
                // the LLM agents ran on the snapshot: the recent layer is ranked by the mode's own steps
                recent == null ? null : query(ns, query, embed, queryEntities, recent, memory, Set.of()),
                changed,
                layers.shadowed());
        List<RecentLayer.Hit> hits = result.hits();
        Map<String, Object> explanation = result.explanation();
        List<Responses.Passage> results = new ArrayList<>();
        for (RecentLayer.Hit s : hits) {
            if (results.size() == topK) {
                break;
            }
            Passage p = s.graph().passage(s.passage());
            if (memory.passage(ns, p.id()).isEmpty()) {
                continue;
            }
            Passage.Texts texts = p.texts();
            results.add(new Responses.Passage(
                    results.size() + 1,
                    s.score(),
                    p.id(),
                    p.documentId(),
                    texts.title(),
                    texts.headings(),
                    texts.text(),
                    texts.memory(),
                    p.start(),
                    p.end()));
        }
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        meters.retrieval(mode.name(), took);
        return new Responses.Retrieved(
                ns,
                mode.name(),
                query,
                topK,
                params.values(),
                results,
                explanation,
                graph.vectorSearch(),
                watermark(state, layers.version(), graph.version()),
                took.toNanos() / 1e6);
    }

    /** Retrieves evidence, then asks the LLM to answer from it with citations (CogitoRAG's passage–memory pairs). */
    public Responses.Answered answer(String ns, String query, String mode, int topK, Map<String, Double> params) {
        requireAnswering();
        Responses.Retrieved retrieved = retrieve(ns, query, mode, topK, params);
        List<Responses.Passage> results = retrieved.results();
        List<Answerer.Evidence> evidence = new ArrayList<>();
        for (Responses.Passage r : results) {
            evidence.add(new Answerer.Evidence(r.title(), r.text(), r.memory()));
        }
        Answerer.Answer a;
        try {
            a = FairPermits.as(ns, () -> llm.answerer().answer(query, evidence));
        } catch (LlmException e) {
            throw QueryException.upstreamFailed("the LLM could not answer: " + e.getMessage());
        }
        List<Responses.Citation> citations = new ArrayList<>();
        for (int n : a.citations()) {
            Responses.Passage r = results.get(n - 1);
            citations.add(new Responses.Citation(n, r.passageId(), r.documentId(), r.title()));
        }
        return new Responses.Answered(
                ns,
                query,
                a.text(),
                citations,
                results,
                new Responses.Usage(a.promptTokens(), a.completionTokens()),
                retrieved.mode(),
                retrieved.watermark());
    }

    /** The namespace's counters and watermark, if it has memory here. */
    public Optional<NamespaceState> namespaceState(String ns) {
        return memory(ns).namespace(ns);
    }

    private NamespaceState state(String ns) {
        return memory(ns)
                .namespace(ns)
                .orElseThrow(() -> QueryException.notFound("namespace '" + ns + "' has no memory yet"));
    }

    private static Watermark watermark(NamespaceState s, Long graphVersion) {
        return watermark(s, graphVersion, graphVersion);
    }

    /** With the version of the whole snapshot the answers were ranked on, below {@code graphVersion} beside a recent layer. */
    private static Watermark watermark(NamespaceState s, Long graphVersion, Long wholeVersion) {
        return new Watermark(
                s.version(), s.inputPartition(), s.inputOffset(), s.updatedAt(), graphVersion, wholeVersion);
    }

    /**
     * The query as a mode runs it on {@code graph}: naming the graph's entities among {@code entityIds}, and showing an
     * LLM only the passages of the graph still in memory and not {@code changed} since the graph was read.
     */
    private static Retrieval.Query query(
            String ns,
            String text,
            Function<String, float[]> embed,
            List<String> entityIds,
            MemoryGraph graph,
            MemoryReader memory,
            Set<String> changed) {
        return Retrieval.Query.of(text, embed.apply(text), embed)
                .withEntities(entityIds.stream()
                        .mapToInt(graph::entityIndex)
                        .filter(i -> i >= 0)
                        .distinct()
                        .toArray())
                // what an LLM is shown of the snapshot is checked against memory first, as the results are; a passage
                // changed since is shown as the recent layer holds it, not as this snapshot does
                .withLive(i -> {
                    String id = graph.passage(i).id();
                    return !changed.contains(id) && memory.passage(ns, id).isPresent();
                });
    }
}
