package dev.engram.understanding.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The LLM agents of ComoRAG's reasoning loop (§2.3, App. D): self-probing, cue writing, memory fusion and
 * try-answer, each a versioned prompt with a JSON reply schema.
 */
public final class ComoAgents {

    private final OpenAiClient client;

    public ComoAgents(OpenAiClient client) {
        this.client = client;
    }

    /** Up to {@code n} new probes, given the past probes and the cues gathered so far. */
    public List<String> probe(String question, List<String> pastProbes, List<String> cues, int n) {
        StringBuilder user = new StringBuilder("Question: ").append(question).append("\n\nSearches made:\n");
        pastProbes.forEach(p -> user.append("- ").append(p).append('\n'));
        user.append("\nLearned so far:\n");
        cues.forEach(c -> user.append(c).append('\n'));
        JsonNode json = call(Prompts.PROBE, Prompts.PROBE.render("n", n), user.toString(), "probes");
        List<String> out = new ArrayList<>();
        json.path("probes").forEach(p -> out.add(p.asText().strip()));
        return out;
    }

    /** The key findings of one probe's evidence towards the question, one per line. */
    public String cue(String question, String probe, List<String> evidence) {
        StringBuilder user = new StringBuilder("Larger question: ")
                .append(question)
                .append("\nSearch: ")
                .append(probe)
                .append("\n\nEvidence:\n");
        evidence.forEach(e -> user.append("- ").append(e).append('\n'));
        JsonNode json = call(Prompts.CUE, Prompts.CUE.instructions(), user.toString(), "findings");
        StringBuilder out = new StringBuilder();
        json.path("findings")
                .forEach(f ->
                        out.append("Key Finding: ").append(f.asText().strip()).append('\n'));
        return out.toString().strip();
    }

    /** One account fusing the cues towards the question. */
    public String fuse(String question, List<String> cues) {
        if (cues.isEmpty()) {
            return "";
        }
        StringBuilder user = new StringBuilder("Question: ").append(question).append("\n\nFindings:\n");
        cues.forEach(c -> user.append(c).append('\n'));
        return call(Prompts.FUSE, Prompts.FUSE.instructions(), user.toString(), "summary")
                .path("summary")
                .asText()
                .strip();
    }

    /** The answer, or null when the evidence and notes do not answer the question yet. */
    public String tryAnswer(String question, List<String> evidence, String history) {
        StringBuilder user = new StringBuilder("Question: ").append(question).append("\n\nEvidence:\n");
        evidence.forEach(e -> user.append("- ").append(e).append('\n'));
        if (!history.isBlank()) {
            user.append("\nNotes so far:\n").append(history).append('\n');
        }
        JsonNode json = call(Prompts.TRY_ANSWER, Prompts.TRY_ANSWER.instructions(), user.toString(), "answer");
        String answer = json.path("answer").asText().strip();
        return json.path("answerable").asBoolean() && !answer.isEmpty() ? answer : null;
    }

    private JsonNode call(Prompts prompt, String instructions, String user, String name) {
        return prompt.ask(client, instructions, user, name).json();
    }
}
