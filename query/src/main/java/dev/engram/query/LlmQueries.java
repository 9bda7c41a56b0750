package dev.engram.query;

import dev.engram.retrieval.Retrieval;
import dev.engram.stores.Keys;
import dev.engram.understanding.llm.Answerer;
import dev.engram.understanding.llm.ComoAgents;
import dev.engram.understanding.llm.LlmException;
import dev.engram.understanding.llm.OpenAiClient;
import dev.engram.understanding.llm.QueryDecomposer;
import dev.engram.understanding.llm.Summarizer;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What an LLM adds to queries, all over one client (so one concurrency limit covers every call of the process). */
public final class LlmQueries {

    private static final Logger LOG = LoggerFactory.getLogger(LlmQueries.class);
    /** Decompositions remembered per question. */
    private static final int DECOMPOSITIONS = 10_000;

    private LlmQueries() {}

    public static QueryService.Llm over(OpenAiClient client) {
        Summarizer summarizer = new Summarizer(client);
        return new QueryService.Llm(
                decomposer(new QueryDecomposer(client)),
                comoAgents(new ComoAgents(client)),
                new Answerer(client),
                summarizer::summarize);
    }

    /**
     * CogitoRAG's LLM query decomposition, at most two sub-questions, remembered per namespace and question (bounded,
     * and never shared between namespaces, so no tenant can tell what another asked); any LLM failure falls back to
     * the rule-based split (null).
     */
    static BiFunction<String, String, List<String>> decomposer(QueryDecomposer decomposer) {
        Map<String, List<String>> remembered = Collections.synchronizedMap(new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, List<String>> eldest) {
                return size() > DECOMPOSITIONS;
            }
        });
        return (namespace, question) -> {
            String key = Keys.of(namespace, question.replace(Keys.SEPARATOR, ' '));
            List<String> cached = remembered.get(key);
            if (cached != null) {
                return cached;
            }
            try {
                List<String> parts = decomposer.decompose(question, 2);
                remembered.put(key, parts);
                return parts;
            } catch (LlmException e) {
                LOG.debug("query decomposition failed, using the rule-based split: {}", e.getMessage());
                return null;
            }
        };
    }

    /** ComoRAG's LLM agents for the {@code como} mode. */
    static Retrieval.Reasoner comoAgents(ComoAgents agents) {
        return new Retrieval.Reasoner() {
            @Override
            public List<String> probe(String question, List<String> pastProbes, List<String> cues, int n) {
                return upstream(() -> agents.probe(question, pastProbes, cues, n));
            }

            @Override
            public String cue(String question, String probe, List<String> evidence) {
                return upstream(() -> agents.cue(question, probe, evidence));
            }

            @Override
            public String fuse(String question, List<String> cues) {
                return upstream(() -> agents.fuse(question, cues));
            }

            @Override
            public String tryAnswer(String question, List<String> evidence, String history) {
                return upstream(() -> agents.tryAnswer(question, evidence, history));
            }
        };
    }

    /** An LLM call on behalf of a request: its failure is the upstream's, not ours. */
    private static <T> T upstream(Supplier<T> call) {
        try {
            return call.get();
        } catch (LlmException e) {
            throw QueryException.upstreamFailed("the LLM failed: " + e.getMessage());
        }
    }
}
