package dev.engram.schemas;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/** The JSON Schemas of every topic, loaded from the classpath ({@code /schemas/*.schema.json}). */
public enum Schemas {
    DOCUMENT_EVENT("document-event"),
    PASSAGE("passage"),
    UNDERSTANDING("understanding"),
    EXTRACTION("extraction"),
    MEMORY_CHANGE("memory-change"),
    MEMORY_COMMAND("memory-command"),
    COMPENSATION("compensation"),
    MIRROR("mirror"),
    DEAD_LETTER("dead-letter");

    private static final String BASE = "https://engram.dev/schemas/";

    private final String fileName;
    private volatile JsonSchema schema;

    Schemas(String name) {
        this.fileName = name + ".schema.json";
    }

    public String fileName() {
        return fileName;
    }

    /** Validation errors of {@code node}, most specific first; empty when valid. */
    public List<String> validate(JsonNode node) {
        Set<ValidationMessage> messages = schema().validate(node);
        return messages.stream()
                .sorted(Comparator.comparing(
                                ValidationMessage::getInstanceLocation, Comparator.comparing(Object::toString))
                        .thenComparing(ValidationMessage::getMessage))
                .map(ValidationMessage::getMessage)
                .toList();
    }

    private JsonSchema schema() {
        JsonSchema s = schema;
        if (s == null) {
            synchronized (this) {
                s = schema;
                if (s == null) {
                    JsonSchemaFactory factory = JsonSchemaFactory.getInstance(
                            SpecVersion.VersionFlag.V202012,
                            builder -> builder.schemaMappers(m -> m.mapPrefix(BASE, "classpath:schemas/")));
                    SchemaValidatorsConfig config = SchemaValidatorsConfig.builder()
                            .formatAssertionsEnabled(true)
                            .build();
                    s = factory.getSchema(SchemaLocation.of(BASE + fileName), config);
                    s.initializeValidators();
                    schema = s;
                }
            }
        }
        return s;
    }
}
