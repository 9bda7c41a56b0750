package dev.engram.understanding.agent;

import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.PassageEvent;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.llm.LlmException;
import dev.engram.understanding.llm.OpenAiClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent construction (RAGA's Read → Search → Verify → Construct as an LLM tool loop): for each passage of a
 * namespace in agent mode, an LLM works through the {@link AgentTools} over the namespace's memory ({@link MemoryView})
 * and a {@link Stage} of its writes, for a bounded number of rounds. When it finishes, the staged entities and
 * relations become the passage's extraction, which the memory step verifies and resolves exactly as it does any other
 * (the same quality gate, anchoring and resolution rules), so retraction, review, the mirrors and retrieval work
 * unchanged.
 *
 * <p>It is an {@link Extractor}: the stream runs it off its threads and outside its transactions, and caches its
 * outcome like an LLM extraction, so a replay never pays for the loop twice. The passage's memory, utility questions
 * and hyperedges come from the deterministic extractor ({@code base}), which also gives the whole extraction whenever
 * the agent cannot: the LLM refused the call (a 4xx), stayed rate-limited or unreachable through
 * {@link Settings#transientAttempts} tries of the passage (before that the passage waits and is tried again:
 * backpressure), the tool calls stayed malformed, the rounds ran out, or the token budget is spent. The extraction's {@link Extraction.Construction} says which, and why.
 * While memory cannot be read ({@link MemoryView.Unavailable}) the passage is not constructed at all, but tried again
 * later, as after an LLM's 503.
 * Nothing the agent staged is written unless it finished: a crash or a failure mid-loop leaves no partial writes.
 */
public final class ConstructionAgent implements Extractor {

    private static final Logger LOG = LoggerFactory.getLogger(ConstructionAgent.class);
    private static final String PROMPT = read("/prompts/" + AgentTools.VERSION + ".txt");

    /**
     * How the agent runs.
     *
     * @param maxRounds tool-calling rounds per passage
     * @param maxMalformedRounds rounds in a row whose calls are all malformed before the agent gives up
     * @param tokensPerPassage most tokens one passage's loop may take
     * @param tokensPerHour most tokens a namespace's loops may take per hour
     * @param concurrencyPerNamespace most loops of one namespace at once
     * @param transientAttempts how many times a passage is tried again while the model is rate-limited or unreachable
     *     (each time after the stream's backoff) before it falls back
     * @param inAgentMode which namespaces the agent constructs (the others get {@code base} alone)
     */
    public record Settings(
            int maxRounds,
            int maxMalformedRounds,
            long tokensPerPassage,
            long tokensPerHour,
            int concurrencyPerNamespace,
            int transientAttempts,
            Predicate<String> inAgentMode) {
        public Settings {
            if (maxRounds < 1 || maxMalformedRounds < 1 || tokensPerPassage < 1 || tokensPerHour < 1) {
                throw new IllegalArgumentException("agent rounds and token budgets must be positive");
            }
            if (concurrencyPerNamespace < 1 || transientAttempts < 0) {
                throw new IllegalArgumentException(
                        "agent concurrency must be positive and its transient attempts not negative");
            }
            Objects.requireNonNull(inAgentMode, "inAgentMode");
        }
    }

    /** Observes the agent, for metrics. */
    public interface Listener {
        /** A passage constructed: {@code outcome} is {@code agent} or the fallback's reason kind. */
        void passage(String namespace, String outcome, int rounds);

        /** A tool call: {@code outcome} is {@code ok}, {@code error} (the tool refused) or {@code malformed}. */
        void toolCall(String tool, String outcome);

        /**
         * Tokens a loop spent that no extraction carries: a loop cut short to be tried again later (the model
         * rate-limited, memory unreadable). The tokens of a finished loop travel in its extraction's usage.
         */
        default void spent(String namespace, String model, Extraction.TokenUsage usage) {}

        Listener NONE = new Listener() {
            @Override
            public void passage(String namespace, String outcome, int rounds) {}

            @Override
            public void toolCall(String tool, String outcome) {}
        };
    }

    /** Why the deterministic construction was used instead of the agent's. */
    enum Fallback {
        BUDGET("budget"),
        ROUNDS("rounds"),
        MALFORMED("malformed"),
        LLM("llm_error"),
        UNAVAILABLE("llm_unavailable"),
        /** The model answered without reading the paragraph. */
        UNREAD("unread"),
        /** The model staged nothing where the deterministic construction finds entities. */
        EMPTY("empty"),
        /** Something in the loop failed that is no one tool's refusal. */
        ERROR("error");

        final String tag;

        Fallback(String tag) {
            this.tag = tag;
        }
    }

    private final OpenAiClient client;
    private final Extractor base;
    private final MemoryView memory;
    private final Settings settings;
    private final Listener listener;
    private final Clock clock;
    private final Map<String, Semaphore> running = new ConcurrentHashMap<>();
    private final Map<String, Window> budgets = new ConcurrentHashMap<>();
    /** What the last constructed paragraph of a document (namespace, id, version) handed on; bounded. */
    private final Map<String, Stage.Carry> carries = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Stage.Carry> eldest) {
            return size() > 10_000;
        }
    };

    /** Transient failures so far per passage version (namespace, passage, content hash); bounded. */
    private final Map<String, Integer> transientFailures = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
            return size() > 10_000;
        }
    };

    public ConstructionAgent(
            OpenAiClient client, Extractor base, MemoryView memory, Settings settings, Listener listener, Clock clock) {
        this.client = client;
        this.base = base;
        this.memory = memory;
        this.settings = settings;
        this.listener = listener;
        this.clock = clock;
    }

    @Override
    public String id() {
        return AgentTools.VERSION + "/" + client.config().model() + "+" + base.id();
    }

    /**
     * A namespace in agent mode gets extractions of its own (they depend on its memory, and must not be shared across
     * namespaces even where the cache is global); the others get the base extractor's.
     */
    @Override
    public String id(String namespace) {
        return settings.inAgentMode().test(namespace) ? id() + "@" + namespace : base.id(namespace);
    }

    @Override
    public boolean cacheable() {
        return true;
    }

    @Override
    public boolean remote() {
        return true;
    }

    @Override
    public Extraction extract(PassageEvent.Upsert passage) {
        Extraction deterministic = base.extract(passage);
        String ns = passage.namespace();
        if (!settings.inAgentMode().test(ns)) {
            return deterministic;
        }
        Semaphore slots = running.computeIfAbsent(ns, k -> new Semaphore(settings.concurrencyPerNamespace(), true));
        try {
            if (!slots.tryAcquire(SLOT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                // backpressure: the namespace's loops are all busy; the passage waits and is tried again
                throw new LlmException("the agent slots of namespace '" + ns + "' are all busy", 503, null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LlmException("interrupted while waiting for an agent slot", -1, e);
        }
        Loop loop = new Loop(passage, deterministic);
        try {
            memory.ensureReadable(ns);
            return loop.run();
        } catch (MemoryView.Unavailable e) {
            // no construction without reading memory first: the passage waits and is tried again, like a 503
            loop.abandon();
            throw new LlmException(
                    "the memory of namespace '" + ns + "' cannot be read yet: " + e.getMessage(), 503, e);
        } catch (LlmException e) {
            loop.abandon();
            throw e;
        } catch (RuntimeException e) {
            LOG.warn("agent construction of passage {} failed", passage.passageId(), e);
            return loop.fallback(Fallback.ERROR, e.getClass().getSimpleName());
        } finally {
            slots.release();
        }
    }

    /** How long a passage waits for one of its namespace's agent slots before it is tried again later. */
    static final Duration SLOT_WAIT = Duration.ofSeconds(30);

    /** Most tool calls answered in one round; the rest are refused. */
    static final int MAX_CALLS_PER_ROUND = 40;

    /** One passage's loop: the conversation, the stage and what it spent. */
    private final class Loop {
        private final PassageEvent.Upsert passage;
        private final Extraction deterministic;
        private final String ns;
        private final String docKey;
        private final Stage stage;
        private final List<OpenAiClient.Turn> turns = new ArrayList<>();
        private long prompt;
        private long completion;
        private int calls;
        private int rounds;

        Loop(PassageEvent.Upsert passage, Extraction deterministic) {
            this.passage = passage;
            this.deterministic = deterministic;
            this.ns = passage.namespace();
            this.docKey = ns + "\u0000" + passage.documentId() + "\u0000" + passage.documentVersion();
            Stage.Carry carried;
            synchronized (carries) {
                carried = carries.getOrDefault(docKey, Stage.Carry.NONE);
            }
            this.stage = new Stage(passage, memory, carried);
        }

        Extraction run() {
            turns.add(OpenAiClient.Turn.system(PROMPT.replace("{rounds}", Integer.toString(settings.maxRounds()))));
            turns.add(OpenAiClient.Turn.user("Construct the memory of paragraph " + (passage.ordinal() + 1)
                    + " of the document " + Json.toString(passage.title()) + " (id "
                    + Json.toString(passage.documentId()) + "). Begin with read_paragraph."));
            int malformedRounds = 0;
            // maxRounds rounds of tool calls, then one more answer to finish with
            for (int round = 1; round <= settings.maxRounds() + 1; round++) {
                Window window = budgets.computeIfAbsent(ns, k -> new Window());
                if (prompt + completion >= settings.tokensPerPassage()) {
                    return fallback(
                            Fallback.BUDGET,
                            "the passage's token budget (" + settings.tokensPerPassage() + ") is spent");
                }
                if (!window.available(clock.millis(), settings.tokensPerHour())) {
                    return fallback(
                            Fallback.BUDGET,
                            "the namespace's hourly token budget (" + settings.tokensPerHour() + ") is spent");
                }
                OpenAiClient.ToolReply reply;
                try {
                    reply = client.converse(turns, AgentTools.definitions());
                } catch (LlmException e) {
                    if (e.retryable() && unavailableAgain(passage) < settings.transientAttempts()) {
                        throw e; // backpressure: the model is rate-limited or away; tried again later
                    }
                    return fallback(e.retryable() ? Fallback.UNAVAILABLE : Fallback.LLM, describe(e));
                }
                rounds = round;
                prompt += reply.promptTokens();
                completion += reply.completionTokens();
                window.charge(clock.millis(), reply.promptTokens() + reply.completionTokens());
                if (reply.toolCalls().isEmpty()) {
                    return finish();
                }
                if (round > settings.maxRounds()) {
                    return fallback(
                            Fallback.ROUNDS, "the agent did not finish within " + settings.maxRounds() + " rounds");
                }
                turns.add(reply.turn());
                boolean allMalformed = true;
                int inRound = 0;
                for (OpenAiClient.ToolCall call : reply.toolCalls()) {
                    calls++;
                    AgentTools.Answer answer = ++inRound > MAX_CALLS_PER_ROUND
                            ? new AgentTools.Answer(
                                    "unknown",
                                    Stage.error("more than " + MAX_CALLS_PER_ROUND + " calls in one round"),
                                    true)
                            : AgentTools.call(stage, call, progress(round));
                    allMalformed &= answer.malformed();
                    listener.toolCall(answer.tool(), answer.malformed() ? "malformed" : answer.ok() ? "ok" : "error");
                    turns.add(OpenAiClient.Turn.tool(call.id(), Json.toString(answer.observation())));
                }
                malformedRounds = allMalformed ? malformedRounds + 1 : 0;
                if (malformedRounds >= settings.maxMalformedRounds()) {
                    return fallback(Fallback.MALFORMED, malformedRounds + " rounds in a row of malformed tool calls");
                }
            }
            throw new IllegalStateException("unreachable: the last round either finishes or falls back");
        }

        /** The model finished: its staged writes, unless it never read the paragraph or staged nothing of it. */
        private Extraction finish() {
            if (!stage.read()) {
                return fallback(Fallback.UNREAD, "the model answered without reading the paragraph");
            }
            if (stage.empty() && !deterministic.entities().isEmpty()) {
                return fallback(
                        Fallback.EMPTY,
                        "the model staged nothing where the deterministic construction finds "
                                + deterministic.entities().size() + " entities");
            }
            Extraction.Construction c =
                    new Extraction.Construction(Extraction.Construction.AGENT, "", rounds, calls, stage.claims());
            synchronized (carries) {
                carries.put(docKey, stage.carry());
            }
            listener.passage(ns, Extraction.Construction.AGENT, rounds);
            return stage.toExtraction(
                    deterministic,
                    id(),
                    client.config().model(),
                    deterministic.usage().plus(usage()),
                    c);
        }

        Extraction fallback(Fallback why, String detail) {
            LOG.info(
                    "passage {} of namespace {}: deterministic construction ({}: {})",
                    passage.passageId(),
                    ns,
                    why.tag,
                    detail);
            listener.passage(ns, why.tag, rounds);
            Extraction.TokenUsage spent = usage();
            return new Extraction(
                    deterministic.memory(),
                    deterministic.entities(),
                    deterministic.facts(),
                    deterministic.relations(),
                    deterministic.questions(),
                    deterministic.extractor(),
                    // the tokens the agent spent are accounted under its model
                    deterministic.model() == null && spent.prompt() + spent.completion() > 0
                            ? client.config().model()
                            : deterministic.model(),
                    deterministic.usage().plus(spent),
                    Extraction.Construction.fallback(why.tag + ": " + detail, rounds, calls));
        }

        /** The loop is cut short to be tried again: what it spent is counted now, as no extraction carries it. */
        void abandon() {
            if (prompt + completion > 0) {
                listener.spent(ns, client.config().model(), usage());
            }
        }

        private Extraction.TokenUsage usage() {
            return new Extraction.TokenUsage(prompt, completion, client.config().cost(prompt, completion));
        }

        private AgentTools.Progress progress(int round) {
            long tokens = prompt + completion;
            return new AgentTools.Progress() {
                @Override
                public int roundsUsed() {
                    return round;
                }

                @Override
                public int roundsLeft() {
                    return settings.maxRounds() - round;
                }

                @Override
                public long tokensUsed() {
                    return tokens;
                }

                @Override
                public long tokensLeft() {
                    return Math.max(0, settings.tokensPerPassage() - tokens);
                }
            };
        }
    }

    /** What went wrong with the model, without its address or its words (they reach the document API). */
    private static String describe(LlmException e) {
        return e.status() > 0 ? "the model answered HTTP " + e.status() : "the model did not answer";
    }

    /** Counts one more transient failure of this passage version; returns the failures before this one. */
    private int unavailableAgain(PassageEvent.Upsert p) {
        String key = p.namespace() + "\u0000" + p.passageId() + "\u0000" + p.contentHash();
        synchronized (transientFailures) {
            int before = transientFailures.getOrDefault(key, 0);
            transientFailures.put(key, before + 1);
            return before;
        }
    }

    /** A namespace's tokens in the current hour. */
    private static final class Window {
        private long start = Long.MIN_VALUE;
        private long used;

        synchronized boolean available(long now, long perHour) {
            roll(now);
            return used < perHour;
        }

        synchronized void charge(long now, long tokens) {
            roll(now);
            used += tokens;
        }

        private void roll(long now) {
            if (start == Long.MIN_VALUE || now - start >= Duration.ofHours(1).toMillis()) {
                start = now;
                used = 0;
            }
        }
    }

    private static String read(String resource) {
        try (InputStream in = ConstructionAgent.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }
}
