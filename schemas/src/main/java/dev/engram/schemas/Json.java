package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The one JSON mapping of every Engram record: snake_case fields, RFC 3339 times. */
public final class Json {

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
            .serializationInclusion(JsonInclude.Include.ALWAYS)
            .build();

    private static final ObjectWriter PLAIN = MAPPER.writer();

    private static final ObjectWriter CANONICAL = MAPPER.writer().with(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

    /** Reads one JSON value and nothing after it, refusing an object that names a field twice. */
    private static final ObjectReader STRICT_TREES = MAPPER.reader()
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    /**
     * The mapper that binds strictly: no string-to-number, number-to-string or float-to-int coercion, no null for a
     * primitive, no unknown field, no field twice, nothing after the value.
     */
    private static final ObjectMapper STRICT = strict();

    private Json() {}

    private static ObjectMapper strict() {
        ObjectMapper m = ((JsonMapper) MAPPER)
                .rebuild()
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
        for (CoercionInputShape shape : new CoercionInputShape[] {
            CoercionInputShape.Integer, CoercionInputShape.Float, CoercionInputShape.Boolean
        }) {
            m.coercionConfigFor(LogicalType.Textual).setCoercion(shape, CoercionAction.Fail);
        }
        return m;
    }

    /** The strict mapper (see {@link #STRICT}), for what people send: optional fields may be left out. */
    public static ObjectMapper strictMapper() {
        return STRICT;
    }

    /**
     * Binds a record Engram wrote to an internal topic, strictly: as {@link #strictMapper()}, and every field present
     * (Engram writes them all, nulls included). What another writer put there is refused with the reason, never
     * coerced or half-read: the writers are checked against the topics' schemas by the tests, so the reader needs no
     * schema validator of its own.
     */
    public static <T> T bindInternal(JsonNode tree, Class<T> type) throws IOException {
        return STRICT.readerFor(type)
                .with(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
                .readValue(STRICT.treeAsTokens(tree));
    }

    /**
     * The reader of JSON that people send (documents, lines of files, bodies): one value, no trailing data, no field
     * twice — what would otherwise be read as the last of two values, silently.
     */
    public static ObjectReader strictTrees() {
        return STRICT_TREES;
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /** The JSON tree of {@code body}, or a missing node when it is empty or not JSON: for reading answers leniently. */
    public static JsonNode treeOrMissing(byte[] body) {
        try {
            JsonNode tree = mapper().readTree(body);
            return tree == null ? mapper().missingNode() : tree;
        } catch (IOException e) {
            return mapper().missingNode();
        }
    }

    public static byte[] toBytes(Object value) {
        return bytes(PLAIN, value);
    }

    private static byte[] bytes(ObjectWriter writer, Object value) {
        try {
            return writer.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "cannot serialize " + value.getClass().getSimpleName(), e);
        }
    }

    /**
     * {@link #toBytes} with the entries of every map, however deep, in key order: the same content gives the same bytes
     * whatever order its maps were built or sent in (an immutable {@code Map.copyOf} iterates in an order that changes
     * from one JVM to the next). For hashes of content, not for what is sent.
     */
    public static byte[] canonicalBytes(Object value) {
        return bytes(CANONICAL, value);
    }

    public static String toString(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "cannot serialize " + value.getClass().getSimpleName(), e);
        }
    }

    /**
     * What is wrong with a JSON text, for a person: the parser's message without the names of its classes and settings
     * or its source excerpts, with the line and column where it stopped. Used wherever a reason for refused JSON is
     * shown (HTTP 400s, dead letters, MCP errors).
     */
    public static String problem(Throwable failure) {
        String message = failure instanceof JsonProcessingException j ? j.getOriginalMessage() : failure.getMessage();
        if (message == null) {
            return "not valid JSON";
        }
        if (message.contains("FAIL_ON_TRAILING_TOKENS")) {
            message = "more data after the JSON value";
        } else if (message.contains("getMaxNestingDepth()")) {
            message = LIMIT.matcher(message).replaceFirst("nested deeper than the $1 levels allowed");
        } else if (message.contains("getMaxNumberLength()")) {
            message = LIMIT.matcher(message).replaceFirst("a number longer than the $1 digits allowed");
        } else if (message.contains("getMaxStringLength()")) {
            message = LIMIT.matcher(message).replaceFirst("a string longer than the $1 characters allowed");
        } else {
            for (Map.Entry<Pattern, String> cleanup : CLEANUPS) {
                message = cleanup.getKey().matcher(message).replaceAll(cleanup.getValue());
            }
            message = message.strip();
            // a type named in the message by its class: its simple name
            Matcher quoted = QUOTED.matcher(message);
            StringBuilder named = new StringBuilder();
            while (quoted.find()) {
                quoted.appendReplacement(named, Matcher.quoteReplacement(simpleName(quoted.group(1))));
            }
            message = quoted.appendTail(named).toString();
        }
        if (failure instanceof JsonProcessingException j
                && j.getLocation() != null
                && j.getLocation().getLineNr() > 0) {
            message += " (line " + j.getLocation().getLineNr() + ", column "
                    + j.getLocation().getColumnNr() + ")";
        }
        return message;
    }

    private static final Pattern QUOTED = Pattern.compile("`([^`]*)`");

    // Jackson's messages quote the input (a duplicate field's whole name, say): these run in linear time (RE2/J)
    private static final String SPACE = "[\\t\\n\\x0B\\f\\r ]";
    /** What a message loses, in order: parser hints, where it was read, line breaks. */
    private static final List<Map.Entry<Pattern, String>> CLEANUPS = List.of(
            Map.entry(
                    Pattern.compile(
                            SPACE + "*\\(not recognized as one since Feature '[^']*' not enabled for parser\\)"),
                    ""),
            Map.entry(Pattern.compile(", from [^)]*\\)"), ")"),
            Map.entry(Pattern.compile(SPACE + "*\\(start marker at \\[Source:[^]]*][^)]*\\)"), ""),
            Map.entry(Pattern.compile(SPACE + "*\\[Source:[^]]*]"), ""),
            Map.entry(Pattern.compile(SPACE + "*\\(bound as `[^`]*`\\)"), ""),
            Map.entry(Pattern.compile(": enable `[^`]*` to allow"), ""),
            Map.entry(
                    Pattern.compile(SPACE + "*(?:\\r\\n|[\\n\\x0B\\f\\r\\x{85}\\x{2028}\\x{2029}])" + SPACE + "*"),
                    " "));

    private static String simpleName(String name) {
        return name.substring(Math.max(name.lastIndexOf('.'), name.lastIndexOf('$')) + 1);
    }

    /** The allowed number in a Jackson constraint's message: "... exceeds the maximum allowed (1000, from ...)". */
    private static final Pattern LIMIT = Pattern.compile("(?s).*?\\((\\d+), from .*");

    /**
     * The first value of a JSON text read into {@code node} that would not be kept as it was sent, as its JSON pointer
     * and why ({@code "/metadata/a: a number out of range"}), or null; see {@link #unkept(JsonNode)}. Checked wherever
     * people's JSON is taken in, before it is written anywhere. A name in the pointer is shown to at most {@link
     * #POINTER_NAME} characters, an unpaired surrogate in it as its escape: the message can always be written.
     */
    public static String notKeptAsRead(JsonNode node) {
        Unkept found = node == null ? null : unkept(node);
        if (found == null) {
            return null;
        }
        StringBuilder pointer = new StringBuilder();
        for (int i = found.reversedPath().size() - 1; i >= 0; i--) {
            String name =
                    Utf8.abbreviate(Utf8.escapeUnpaired(found.reversedPath().get(i)), POINTER_NAME, "…");
            // RFC 6901: "~" and "/" inside a name are escaped
            pointer.append('/').append(name.replace("~", "~0").replace("/", "~1"));
        }
        return (pointer.isEmpty() ? "/" : pointer) + ": " + found.why();
    }

    /** The most characters of one name a pointer in a message shows. */
    static final int POINTER_NAME = 100;

    /** A value that would not be kept as sent: why, and the names and indices that lead to it, innermost first. */
    private record Unkept(List<String> reversedPath, String why) {}

    /**
     * The first value under {@code node} that would not be kept as it was sent, or null: a string or field name with an
     * unpaired surrogate (a valid JSON escape such as {@code "\ud800"} that no UTF-8 encodes: written to bytes it would
     * become {@code ?}), or a number too large for a double ({@code 1e400} reads as infinity, which JSON cannot hold: it
     * would come back as the string {@code "Infinity"}). One walk for both; its path is made only for what is found,
     * so the walk takes time linear in the value, however long its names and deep its nesting.
     */
    private static Unkept unkept(JsonNode node) {
        if (node.isTextual()) {
            return Utf8.encodable(node.textValue())
                    ? null
                    : new Unkept(new ArrayList<>(), "an unpaired surrogate, which is not text");
        }
        if (node.isNumber()) {
            return Double.isFinite(node.doubleValue()) ? null : new Unkept(new ArrayList<>(), "a number out of range");
        }
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> field : node.properties()) {
                Unkept found = Utf8.encodable(field.getKey())
                        ? unkept(field.getValue())
                        : new Unkept(new ArrayList<>(), "an unpaired surrogate, which is not text");
                if (found != null) {
                    found.reversedPath().add(field.getKey());
                    return found;
                }
            }
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                Unkept found = unkept(node.get(i));
                if (found != null) {
                    found.reversedPath().add(Integer.toString(i));
                    return found;
                }
            }
        }
        return null;
    }

    public static <T> T fromBytes(byte[] bytes, Class<T> type) {
        try {
            return MAPPER.readValue(bytes, type);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + type.getSimpleName(), e);
        }
    }
}
