package dev.engram.understanding.agent;

import java.util.List;

/**
 * What the construction agent may read of a namespace's memory: entities by name or alias, entities like a text,
 * passages related to a query, and the relation types in use. Implementations answer from the instance that owns the
 * namespace; they may lag the memory step a little, which the memory step's own resolution makes up for.
 */
public interface MemoryView {

    /** An entity memory holds. */
    record KnownEntity(String id, String name, String type, String description, List<String> aliases) {
        public KnownEntity {
            aliases = aliases == null ? List.of() : List.copyOf(aliases);
            description = description == null ? "" : description;
        }
    }

    /** A passage memory holds: its document and its memory (the self-contained restatement). */
    record KnownPassage(String passageId, String documentId, String memory) {}

    /**
     * Memory cannot be read right now (the instance is starting or rebalancing, the namespace's owner does not answer):
     * the agent does not construct without it, and the passage is tried again later.
     */
    final class Unavailable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * A relation type of the namespace, in how many passages it occurs, and whether it is {@code established} (it
     * recurs) or only {@code proposed}.
     */
    record RelationType(String relation, int passages, String status) {}

    /**
     * Throws {@link Unavailable} when the namespace's memory cannot be read now; the agent asks before it spends a token.
     */
    default void ensureReadable(String namespace) {}

    /** Entities whose name or an alias is {@code name} (case, punctuation and articles aside). */
    List<KnownEntity> entitiesNamed(String namespace, String name, int limit);

    /** Entities whose meaning is nearest {@code text} (by their embeddings). */
    List<KnownEntity> entitiesLike(String namespace, String text, int limit);

    /** Passages most related to {@code query} (fusion retrieval). */
    List<KnownPassage> related(String namespace, String query, int limit);

    /** The relation types the namespace's facts use, most used first. */
    List<RelationType> relationTypes(String namespace, int limit);

    /** A memory with nothing in it: every search finds nothing. */
    MemoryView EMPTY = new MemoryView() {
        @Override
        public List<KnownEntity> entitiesNamed(String namespace, String name, int limit) {
            return List.of();
        }

        @Override
        public List<KnownEntity> entitiesLike(String namespace, String text, int limit) {
            return List.of();
        }

        @Override
        public List<KnownPassage> related(String namespace, String query, int limit) {
            return List.of();
        }

        @Override
        public List<RelationType> relationTypes(String namespace, int limit) {
            return List.of();
        }
    };
}
