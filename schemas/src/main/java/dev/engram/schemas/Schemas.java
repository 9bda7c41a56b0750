package dev.engram.schemas;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Pattern;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import com.networknt.schema.regex.RegularExpression;
import com.networknt.schema.regex.RegularExpressionFactory;
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

    /**
     * A schema's {@code pattern} in RE2/J: it runs in time linear in the value whatever the value holds, and its
     * {@code $} matches only at the end of the value, as in ECMA-262, never before a final line terminator (a
     * namespace {@code "docs\n"} does not match {@code ^[A-Za-z0-9._-]+$}). Like ECMA-262, a pattern is not
     * anchored unless it says so.
     */
    static final RegularExpressionFactory LINEAR_PATTERNS = regex -> {
        Pattern pattern = Pattern.compile(regex);
        return (RegularExpression) value -> pattern.matcher(value).find();
    };

    private final String fileName;
    private volatile JsonSchema schema;

    Schemas(String name) {
        this.fileName = name + ".schema.json";
    }

    /** Validation errors of {@code node}, most specific first; empty when valid. */
    public List<String> validate(JsonNode node) {
        return fully(schema(), node);
    }

    private static List<String> fully(JsonSchema full, JsonNode node) {
        Set<ValidationMessage> messages;
        try {
            messages = full.validate(node);
        } catch (NumberFormatException | ArithmeticException e) {
            // the validator fails on some values it cannot compare (a number beyond a double's range in an enum)
            return List.of("a value the validator cannot compare ("
                    + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
        }
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
                            .regularExpressionFactory(LINEAR_PATTERNS)
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
