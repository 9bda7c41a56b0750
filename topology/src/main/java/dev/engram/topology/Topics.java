package dev.engram.topology;

import java.util.List;

/** Every topic of Engram, named with the configured prefix. */
public record Topics(String prefix) {

    /** Input: document events (key: document id; value: document-event.schema.json). */
    public String documents() {
        return prefix + "documents";
    }

    /** Passages read from documents (key: passage id; value: passage.schema.json). */
    public String passages() {
        return prefix + "passages";
    }

    /** Understood passages, retractions and manifests (key: namespace; value: understanding.schema.json). */
    public String understandings() {
        return prefix + "understandings";
    }

    /** Extraction cache, compacted (key: "content hash|extractor id"; value: extraction.schema.json). */
    public String extractions() {
        return prefix + "extractions";
    }

    /** Versioned mutations of each namespace's memory (key: namespace; value: memory-change.schema.json). */
    public String memoryChanges() {
        return prefix + "memory-changes";
    }

    /** Operators' entity-resolution commands (key: namespace; value: memory-command.schema.json). */
    public String memoryCommands() {
        return prefix + "memory-commands";
    }

    /** Failed sink writes to converge (key: namespace; value: compensation.schema.json). */
    public String compensations() {
        return prefix + "compensations";
    }

    /** Rejected inputs with their reason (key: the original key; value: dead-letter.schema.json). */
    public String deadLetters() {
        return prefix + "dead-letters";
    }

    public List<String> all() {
        return List.of(
                documents(),
                passages(),
                understandings(),
                extractions(),
                memoryChanges(),
                memoryCommands(),
                compensations(),
                deadLetters());
    }
}
