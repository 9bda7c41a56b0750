package dev.engram.understanding.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Conversation;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Span;
import dev.engram.understanding.ExtractionException;
import dev.engram.understanding.Extractor;
import dev.engram.understanding.RelativeTime;
import dev.engram.understanding.TextSpans;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Extraction by an LLM over an OpenAI-compatible API: one structured-output call per passage returns the memory,
 * entities, facts, multi-entity relations and utility questions. A reply that is not valid JSON for the schema is
 * repaired if it can be, otherwise asked for once more with the error, and then given up on with the reason (the
 * step dead-letters the passage). Evidence quotes and entity names are located in the passage to give spans; what
 * cannot be located keeps no span, for the memory step to verify.
 */
public final class LlmExtractor implements Extractor {

    private final OpenAiClient client;
    private final Prompts prompt;
    private final int questions;

    public LlmExtractor(OpenAiClient client, int questions) {
        this.client = client;
        this.prompt = Prompts.EXTRACT;
        this.questions = questions;
    }

    @Override
    public String id() {
        return "llm/" + prompt.version() + "/" + client.config().model();
    }

    @Override
    public boolean cacheable() {
        return true;
    }

    @Override
    public boolean remote() {
        return true;
    }

    /**
     * What the passage means only with its circumstances: who says it to whom (a conversation's turn), and the day it
     * was written when it speaks of time relative to it.
     */
    static String context(PassageEvent.Upsert passage) {
        StringBuilder sb = new StringBuilder();
        Conversation c = passage.conversation();
        if (c != null) {
            sb.append("Speaker: ").append(c.speaker()).append(" (the passage's \"I\", \"me\" and \"my\")\n");
            if (c.addressee() != null) {
                sb.append("Spoken to: ").append(c.addressee()).append(" (the passage's \"you\")\n");
            }
            sb.append("Name the speaker and whom they speak to in the memory and the facts, not I or you.\n");
        }
        if (c != null && passage.eventTime() != null && RelativeTime.mentions(passage.text())) {
            LocalDate day = passage.eventTime().atZone(ZoneOffset.UTC).toLocalDate();
            sb.append("Written on: ")
                    .append(day.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH))
                    .append(' ')
                    .append(RelativeTime.day(day))
                    .append(". Write a time said relative to that day (\"yesterday\", \"last week\") as the date it")
                    .append(" names, in the memory and as a date entity.\n");
        }
        return sb.isEmpty() ? "" : sb.append('\n').toString();
    }

    @Override
    public Extraction extract(PassageEvent.Upsert passage) {
        List<OpenAiClient.Message> messages = OpenAiClient.messages(
                prompt.render("questions", questions),
                (passage.title().isBlank() ? "" : "Title: " + passage.title() + "\n\n") + context(passage)
                        + "Passage:\n" + passage.text());
        long promptTokens = 0;
        long completionTokens = 0;
        String problem = null;
        for (int attempt = 0; attempt < 2; attempt++) {
            OpenAiClient.Completion reply;
            try {
                reply = client.chat(messages, "passage_memory", prompt.responseSchema());
            } catch (LlmException e) {
                throw new ExtractionException("LLM call failed: " + e.getMessage(), e);
            }
            promptTokens += reply.promptTokens();
            completionTokens += reply.completionTokens();
            try {
                JsonNode json = JsonReplies.parse(reply.content());
                List<String> violations = prompt.violations(json);
                if (violations.isEmpty()) {
                    return toExtraction(passage.text(), json, promptTokens, completionTokens);
                }
                problem = "reply does not match the schema: " + String.join("; ", violations);
            } catch (JsonProcessingException e) {
                problem = "reply is not valid JSON: " + e.getOriginalMessage();
            }
            messages = new ArrayList<>(messages);
            messages.add(new OpenAiClient.Message("assistant", OpenAiClient.abbreviate(reply.content())));
            messages.add(new OpenAiClient.Message(
                    "user", "Your reply could not be used (" + problem + "). Reply again with only the JSON object."));
        }
        throw new ExtractionException("LLM returned malformed output twice: " + problem);
    }

    private Extraction toExtraction(String text, JsonNode json, long promptTokens, long completionTokens) {
        List<Extraction.Entity> entities = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (JsonNode e : json.path("entities")) {
            String name = e.path("name").asText().strip();
            if (name.isEmpty() || !seen.add(name.toLowerCase(Locale.ROOT))) {
                continue;
            }
            List<String> aliases = new ArrayList<>();
            e.path("aliases").forEach(a -> {
                String alias = a.asText().strip();
                if (!alias.isEmpty() && !alias.equals(name)) {
                    aliases.add(alias);
                }
            });
            List<Span> spans = new ArrayList<>(TextSpans.occurrences(text, name));
            aliases.forEach(a -> spans.addAll(TextSpans.occurrences(text, a)));
            entities.add(new Extraction.Entity(
                    name,
                    type(e.path("type").asText()),
                    e.path("description").asText().strip(),
                    aliases,
                    TextSpans.outermost(spans)));
        }
        List<Extraction.Fact> facts = new ArrayList<>();
        for (JsonNode f : json.path("facts")) {
            String head = f.path("head").asText().strip();
            String relation = f.path("relation").asText().strip();
            String tail = f.path("tail").asText().strip();
            // an incomplete fact is kept: the memory step's verification rejects it into the review list
            facts.add(new Extraction.Fact(
                    head,
                    relation,
                    tail,
                    TextSpans.locate(text, f.path("evidence").asText()),
                    clamp(f.path("confidence"))));
        }
        List<Extraction.Relation> relations = new ArrayList<>();
        for (JsonNode r : json.path("relations")) {
            List<String> names = new ArrayList<>();
            r.path("entities").forEach(n -> names.add(n.asText().strip()));
            String relation = r.path("relation").asText().strip();
            if (names.size() >= 2 && !relation.isEmpty()) {
                relations.add(new Extraction.Relation(
                        relation,
                        names,
                        TextSpans.locate(text, r.path("evidence").asText()),
                        clamp(r.path("confidence"))));
            }
        }
        List<String> qs = new ArrayList<>();
        for (JsonNode q : json.path("questions")) {
            String question = q.asText().strip();
            if (!question.isEmpty() && qs.size() < questions && !qs.contains(question)) {
                qs.add(question);
            }
        }
        String memory = json.path("memory").asText().strip();
        return new Extraction(
                memory.isEmpty() ? text : memory,
                entities,
                facts,
                relations,
                qs,
                id(),
                client.config().model(),
                new Extraction.TokenUsage(
                        promptTokens, completionTokens, client.config().cost(promptTokens, completionTokens)));
    }

    private static EntityType type(String name) {
        try {
            return EntityType.valueOf(name.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return EntityType.OTHER;
        }
    }

    private static double clamp(JsonNode n) {
        double v = n.isNumber() ? n.asDouble() : 0.5;
        return Math.max(0, Math.min(1, v));
    }
}
