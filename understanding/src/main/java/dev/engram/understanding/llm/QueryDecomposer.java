package dev.engram.understanding.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** Splits a question into independent sub-questions with the LLM (CogitoRAG's decomposition), for retrieval. */
public final class QueryDecomposer {

    private final OpenAiClient client;
    private final Prompts prompt = Prompts.DECOMPOSE;

    public QueryDecomposer(OpenAiClient client) {
        this.client = client;
    }

    public String version() {
        return prompt.version();
    }

    /** The sub-questions, or an empty list when the question should not be split or the reply is unusable. */
    public List<String> decompose(String question, int maxSplits) {
        OpenAiClient.Completion reply = client.chat(
                OpenAiClient.messages(prompt.render("max", maxSplits), question),
                "decomposition",
                prompt.responseSchema());
        try {
            JsonNode json = JsonReplies.parse(reply.content());
            if (!prompt.violations(json).isEmpty() || !json.path("split").asBoolean(false)) {
                return List.of();
            }
            List<String> out = new ArrayList<>();
            for (JsonNode q : json.path("sub_questions")) {
                String s = q.asText().strip();
                if (!s.isEmpty() && out.size() < maxSplits) {
                    out.add(s);
                }
            }
            return out;
        } catch (JsonProcessingException e) {
            return List.of();
        }
    }
}
