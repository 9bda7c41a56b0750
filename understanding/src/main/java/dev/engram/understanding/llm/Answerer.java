package dev.engram.understanding.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** Answers a question from retrieved evidence (passage + memory pairs, CogitoRAG §4.3.3) with cited passages. */
public final class Answerer {

    /** One piece of evidence as the prompt shows it. */
    public record Evidence(String title, String passage, String memory) {}

    /** The answer, the 1-based numbers of the evidence it cites, and the tokens it took. */
    public record Answer(String text, List<Integer> citations, long promptTokens, long completionTokens) {}

    private final OpenAiClient client;
    private final Prompts prompt = Prompts.ANSWER;

    public Answerer(OpenAiClient client) {
        this.client = client;
    }

    public String version() {
        return prompt.version();
    }

    public Answer answer(String question, List<Evidence> evidence) {
        StringBuilder user = new StringBuilder("Question: ").append(question).append("\n\nEvidence:\n");
        for (int i = 0; i < evidence.size(); i++) {
            Evidence e = evidence.get(i);
            user.append("\n[")
                    .append(i + 1)
                    .append("] ")
                    .append(e.title())
                    .append("\nPassage: ")
                    .append(e.passage())
                    .append("\nMemory: ")
                    .append(e.memory())
                    .append('\n');
        }
        Prompts.Reply reply = prompt.ask(client, prompt.instructions(), user.toString(), "answer");
        List<Integer> citations = new ArrayList<>();
        for (JsonNode c : reply.json().path("citations")) {
            int n = c.asInt();
            if (n >= 1 && n <= evidence.size() && !citations.contains(n)) {
                citations.add(n);
            }
        }
        return new Answer(
                reply.json().path("answer").asText(), citations, reply.promptTokens(), reply.completionTokens());
    }
}
