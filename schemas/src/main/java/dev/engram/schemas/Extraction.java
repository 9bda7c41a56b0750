package dev.engram.schemas;

import java.util.List;

/**
 * What an extractor read from one passage, before any embedding: the memory (a self-contained restatement), the
 * entities, the facts between them, multi-entity relations and utility questions. This is the value of the
 * extraction cache, keyed by (passage content hash, extractor version), so it never holds model-specific vectors.
 */
public record Extraction(
        String memory,
        List<Entity> entities,
        List<Fact> facts,
        List<Relation> relations,
        List<String> questions,
        String extractor,
        String model,
        TokenUsage usage) {

    public Extraction {
        entities = entities == null ? List.of() : List.copyOf(entities);
        facts = facts == null ? List.of() : List.copyOf(facts);
        relations = relations == null ? List.of() : List.copyOf(relations);
        questions = questions == null ? List.of() : List.copyOf(questions);
        usage = usage == null ? TokenUsage.NONE : usage;
    }

    /** An entity named in the passage; {@code spans} are its mentions (evidence) in the passage text. */
    public record Entity(String name, EntityType type, String description, List<String> aliases, List<Span> spans) {
        public Entity {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("entity name must not be blank");
            }
            type = type == null ? EntityType.OTHER : type;
            description = description == null ? "" : description;
            aliases = aliases == null ? List.of() : List.copyOf(aliases);
            spans = spans == null ? List.of() : List.copyOf(spans);
        }

        /** The text an entity is embedded from: {@code "name: description"}. */
        public String embeddingText() {
            return description.isBlank() ? name : name + ": " + description;
        }
    }

    /** A (head, relation, tail) statement; head and tail are entity names of the passage. */
    public record Fact(String head, String relation, String tail, Span evidence, double confidence) {
        public Fact {
            if (confidence < 0 || confidence > 1) {
                throw new IllegalArgumentException("confidence must be in [0, 1]");
            }
        }

        /** The text a fact is embedded from: {@code "head relation tail"}. */
        public String text() {
            return head + " " + relation + " " + tail;
        }
    }

    /** A relation among several entities stated at once (a hyperedge). */
    public record Relation(String relation, List<String> entities, Span evidence, double confidence) {
        public Relation {
            entities = entities == null ? List.of() : List.copyOf(entities);
        }
    }

    /** Tokens an LLM extraction consumed and what they cost at the configured prices; zero for the embedded one. */
    public record TokenUsage(long prompt, long completion, double costUsd) {
        public static final TokenUsage NONE = new TokenUsage(0, 0, 0);

        public TokenUsage plus(TokenUsage other) {
            return new TokenUsage(prompt + other.prompt, completion + other.completion, costUsd + other.costUsd);
        }
    }
}
