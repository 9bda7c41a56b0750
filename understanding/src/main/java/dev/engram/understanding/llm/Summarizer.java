package dev.engram.understanding.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** Writes an abstractive summary of a theme's passages (GEM-RAG's summary nodes) with an LLM. */
public final class Summarizer {

    private final OpenAiClient client;
    private final Prompts prompt = Prompts.SUMMARIZE;

    public Summarizer(OpenAiClient client) {
        this.client = client;
    }

    public String version() {
        return prompt.version();
    }

    /** The summary of these texts (passage memories, strongest first). */
    public String summarize(List<String> texts) {
        StringBuilder user = new StringBuilder("Passages:\n");
        for (int i = 0; i < texts.size(); i++) {
            user.append("\n[").append(i + 1).append("] ").append(texts.get(i)).append('\n');
        }
        OpenAiClient.Completion reply = client.chat(
                OpenAiClient.messages(prompt.instructions(), user.toString()), "summary", prompt.responseSchema());
        try {
            JsonNode json = JsonReplies.parse(reply.content());
            List<String> violations = prompt.violations(json);
            if (!violations.isEmpty()) {
                throw new LlmException(
                        "summary does not match its schema: " + String.join("; ", violations), 200, null);
            }
            return json.path("summary").asText().strip();
        } catch (JsonProcessingException e) {
            throw new LlmException("summary is not valid JSON: " + e.getOriginalMessage(), 200, e);
        }
    }
}
