package dev.engram.understanding.llm;

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
        return prompt.ask(client, prompt.instructions(), user.toString(), "summary")
                .json()
                .path("summary")
                .asText()
                .strip();
    }
}
