package dev.engram.understanding.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Pattern;
import dev.engram.schemas.Json;

/** Reads a model's JSON reply, repairing the usual slips: code fences, prose around the object, trailing commas. */
final class JsonReplies {

    /** White space as Java's {@code \s} has it (RE2/J's leaves out the vertical tab). */
    private static final String SPACE = "[\\t\\n\\x0B\\f\\r ]";

    private static final Pattern FENCE = Pattern.compile("^```[a-zA-Z]*" + SPACE + "*|" + SPACE + "*```$");
    private static final Pattern TRAILING_COMMA = Pattern.compile("," + SPACE + "*([}\\]])");

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
