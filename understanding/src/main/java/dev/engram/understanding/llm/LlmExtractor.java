package dev.engram.understanding.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.Span;
import dev.engram.understanding.ExtractionException;
import dev.engram.understanding.Extractor;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    @Override
    public Extraction extract(PassageEvent.Upsert passage) {
        List<OpenAiClient.Message> messages = OpenAiClient.messages(
                prompt.render("questions", questions),
                (passage.title().isBlank() ? "" : "Title: " + passage.title() + "\n\n") + "Passage:\n"
                        + passage.text());
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
            List<Span> spans = new ArrayList<>(occurrences(text, name));
            aliases.forEach(a -> spans.addAll(occurrences(text, a)));
            entities.add(new Extraction.Entity(
                    name,
                    type(e.path("type").asText()),
                    e.path("description").asText().strip(),
                    aliases,
                    outermost(spans)));
        }
        List<Extraction.Fact> facts = new ArrayList<>();
        for (JsonNode f : json.path("facts")) {
            String head = f.path("head").asText().strip();
            String relation = f.path("relation").asText().strip();
            String tail = f.path("tail").asText().strip();
            // an incomplete fact is kept: the memory step's verification rejects it into the review list
            facts.add(new Extraction.Fact(
                    head, relation, tail, locate(text, f.path("evidence").asText()), clamp(f.path("confidence"))));
        }
        List<Extraction.Relation> relations = new ArrayList<>();
        for (JsonNode r : json.path("relations")) {
            List<String> names = new ArrayList<>();
            r.path("entities").forEach(n -> names.add(n.asText().strip()));
            String relation = r.path("relation").asText().strip();
            if (names.size() >= 2 && !relation.isEmpty()) {
                relations.add(new Extraction.Relation(
                        relation, names, locate(text, r.path("evidence").asText()), clamp(r.path("confidence"))));
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

    /** Distinct spans in text order, without those inside a longer one ("Babbage" within "Charles Babbage"). */
    static List<Span> outermost(List<Span> spans) {
        List<Span> out = new ArrayList<>();
        for (Span s : spans) {
            boolean inside = spans.stream().anyMatch(o -> !o.equals(s) && o.start() <= s.start() && s.end() <= o.end());
            if (!inside && !out.contains(s)) {
                out.add(s);
            }
        }
        out.sort((a, b) -> Integer.compare(a.start(), b.start()));
        return out;
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

    /** Every occurrence of {@code needle} as a whole word; case-insensitive when there is no exact one. */
    static List<Span> occurrences(String text, String needle) {
        List<Span> out =
                find(text, Pattern.compile("(?<![\\p{L}\\p{N}])" + Pattern.quote(needle) + "(?![\\p{L}\\p{N}])"));
        if (out.isEmpty()) {
            out = find(
                    text,
                    Pattern.compile(
                            "(?<![\\p{L}\\p{N}])" + Pattern.quote(needle) + "(?![\\p{L}\\p{N}])",
                            Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE));
        }
        return out;
    }

    private static List<Span> find(String text, Pattern p) {
        List<Span> out = new ArrayList<>();
        Matcher m = p.matcher(text);
        while (m.find()) {
            out.add(new Span(m.start(), m.end()));
        }
        return out;
    }

    /** Where an evidence quote stands in the passage, tolerant of case and whitespace; null if it does not. */
    static Span locate(String text, String quote) {
        String q = quote == null ? "" : quote.strip();
        if (q.isEmpty()) {
            return null;
        }
        int exact = text.indexOf(q);
        if (exact >= 0) {
            return new Span(exact, exact + q.length());
        }
        String[] words = q.split("\\s+");
        StringBuilder regex = new StringBuilder();
        for (String w : words) {
            if (!regex.isEmpty()) {
                regex.append("\\s+");
            }
            regex.append(Pattern.quote(w));
        }
        Matcher m = Pattern.compile(regex.toString(), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)
                .matcher(text);
        return m.find() ? new Span(m.start(), m.end()) : null;
    }
}
