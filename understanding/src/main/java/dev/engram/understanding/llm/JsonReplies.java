package dev.engram.understanding.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Pattern;
import dev.engram.schemas.Json;

/** Reads a model's JSON reply, repairing the usual slips: code fences, prose around the object, trailing commas. */
final class JsonReplies {

    private static final Pattern FENCE = Pattern.compile("^```[a-zA-Z]*\\s*|\\s*```$");
    private static final Pattern TRAILING_COMMA = Pattern.compile(",\\s*([}\\]])");

    private JsonReplies() {}

    /** The reply as JSON, repaired if needed; throws with the parser's message if it cannot be. */
    static JsonNode parse(String reply) throws JsonProcessingException {
        try {
            return Json.mapper().readTree(reply);
        } catch (JsonProcessingException first) {
            String s = FENCE.matcher(reply.strip()).replaceAll("");
            int open = s.indexOf('{');
            int close = s.lastIndexOf('}');
            if (open < 0 || close < open) {
                throw first;
            }
            s = TRAILING_COMMA.matcher(s.substring(open, close + 1)).replaceAll("$1");
            return Json.mapper().readTree(s);
        }
    }
}
