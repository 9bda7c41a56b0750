package dev.engram.schemas;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
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
        TokenUsage usage,
        Construction construction) {

    public Extraction {
        entities = entities == null ? List.of() : List.copyOf(entities);
        facts = facts == null ? List.of() : List.copyOf(facts);
        relations = relations == null ? List.of() : List.copyOf(relations);
        questions = questions == null ? List.of() : List.copyOf(questions);
        usage = usage == null ? TokenUsage.NONE : usage;
    }

    /** An extraction built by the deterministic construction (no construction record). */
    public Extraction(
            String memory,
            List<Entity> entities,
            List<Fact> facts,
            List<Relation> relations,
            List<String> questions,
            String extractor,
            String model,
            TokenUsage usage) {
        this(memory, entities, facts, relations, questions, extractor, model, usage, null);
    }

    /** The same extraction with a construction record. */
    public Extraction withConstruction(Construction c) {
        return new Extraction(memory, entities, facts, relations, questions, extractor, model, usage, c);
    }

    /**
     * How the agent construction went for this passage: {@code mode} {@code agent} (the agent's staged writes are the
     * entities and facts) or {@code fallback} (the deterministic construction, with the {@code reason}); the rounds and
     * tool calls it took; and its claims, which the memory step turns into review items where the rules do not bear
     * them out.
     */
    public record Construction(String mode, String reason, int rounds, int toolCalls, List<Claim> claims) {
        public static final String AGENT = "agent";
        public static final String FALLBACK = "fallback";

        public Construction {
            if (!AGENT.equals(mode) && !FALLBACK.equals(mode)) {
                throw new IllegalArgumentException("construction mode must be agent or fallback");
            }
            reason = reason == null ? "" : reason;
            claims = claims == null ? List.of() : List.copyOf(claims);
        }

        /** Fallback reasons that pass with time: an extraction made for one of them is not cached. */
        public static final List<String> PASSING = List.of("budget", "llm_unavailable");

        /** Whether the extraction is worth caching: not when it fell back for a reason that passes. */
        public boolean cacheable() {
            return AGENT.equals(mode) || PASSING.stream().noneMatch(p -> reason.startsWith(p + ":"));
        }

        public static Construction fallback(String reason, int rounds, int toolCalls) {
            return new Construction(FALLBACK, reason, rounds, toolCalls, List.of());
        }
    }

    /**
     * What the agent asked of memory beyond its own passage: that two entities are the same ({@code same_as}, between
     * {@code subject} and {@code other}), that an element memory holds be deleted ({@code delete_entity},
     * {@code delete_relation}), or a person's look ({@code review}); with its reason.
     */
    public record Claim(String kind, String subject, String other, String reason) {
        public static final String SAME_AS = "same_as";
        public static final String DELETE_ENTITY = "delete_entity";
        public static final String DELETE_RELATION = "delete_relation";
        public static final String REVIEW = "review";

        public Claim {
            if (!List.of(SAME_AS, DELETE_ENTITY, DELETE_RELATION, REVIEW).contains(kind)) {
                throw new IllegalArgumentException("unknown claim kind: " + kind);
            }
            if (subject == null || subject.isBlank()) {
                throw new IllegalArgumentException("a claim needs a subject");
            }
            other = other == null ? "" : other;
            reason = reason == null ? "" : reason;
        }
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

    /** What a record of the extraction cache's topic holds: an extraction, or why it holds none. */
    public record Checked(Extraction extraction, String problem) {}

    /**
     * Reads a record of the extraction cache's topic strictly: JSON that {@code extraction.schema.json} accepts is an
     * extraction; anything else is a problem, never an extraction with its fields missing.
     */
    public static Checked check(byte[] bytes) {
        try {
            JsonNode tree = Json.strictTrees().readTree(bytes);
            List<String> errors =
                    tree == null || tree.isMissingNode() ? List.of("empty value") : Schemas.EXTRACTION.validate(tree);
            if (!errors.isEmpty()) {
                return new Checked(null, "schema: " + errors.get(0));
            }
            return new Checked(Json.mapper().treeToValue(tree, Extraction.class), null);
        } catch (IOException | RuntimeException e) {
            return new Checked(null, Json.problem(e));
        }
    }
}
