package dev.engram.stores;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;

/**
 * JSON form of a count map keyed by data (name forms, aliases): an array of {@code [value, count]} pairs in value
 * order. Keys written as JSON field names would fill the parser's shared symbol table with every name ever seen.
 */
final class Counts {

    private Counts() {}

    static final class Serializer extends JsonSerializer<Map<String, Integer>> {
        @Override
        public void serialize(Map<String, Integer> value, JsonGenerator gen, SerializerProvider provider)
                throws IOException {
            gen.writeStartArray();
            for (Map.Entry<String, Integer> e : new TreeMap<>(value).entrySet()) {
                gen.writeStartArray();
                gen.writeString(e.getKey());
                gen.writeNumber(e.getValue());
                gen.writeEndArray();
            }
            gen.writeEndArray();
        }
    }

    static final class Deserializer extends JsonDeserializer<Map<String, Integer>> {
        @Override
        public Map<String, Integer> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.currentToken() != JsonToken.START_ARRAY) {
                return ctxt.reportInputMismatch(Map.class, "expected an array of [value, count] pairs");
            }
            Map<String, Integer> out = new TreeMap<>();
            while (p.nextToken() == JsonToken.START_ARRAY) {
                p.nextToken();
                String key = p.getValueAsString();
                p.nextToken();
                int count = p.getIntValue();
                if (p.nextToken() != JsonToken.END_ARRAY) {
                    return ctxt.reportInputMismatch(Map.class, "a count pair has more than two elements");
                }
                out.put(key, count);
            }
            return out;
        }
    }
}
