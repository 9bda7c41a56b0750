package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;

/**
 * The copies a namespace grows with: which capitalized words every copy keeps, and copy {@code k} of a base document
 * with the others renamed (see {@link CopyNames}).
 */
final class CorpusCopies {

    private CorpusCopies() {}

    /** Capitalized words in at least one in two hundred base documents: kept in every copy, so they gather passages. */
    static Set<String> commonWords(List<JsonNode> docs) {
        Map<String, Integer> df = new HashMap<>();
        for (JsonNode d : docs) {
            Set<String> seen = new HashSet<>();
            Matcher m = CopyNames.CAPITALIZED.matcher(
                    d.path("title").asText() + "\n" + d.path("text").asText());
            while (m.find()) {
                seen.add(m.group());
            }
            seen.forEach(w -> df.merge(w, 1, Integer::sum));
        }
        Set<String> common = new HashSet<>();
        int threshold = Math.max(2, docs.size() / 200);
        df.forEach((w, n) -> {
            if (n >= threshold) {
                common.add(w);
            }
        });
        return common;
    }

    /** Copy {@code k} of a document: its own id, and every uncommon capitalized word renamed. */
    static JsonNode renamed(JsonNode doc, int k, CopyNames names) {
        ObjectNode copy = doc.deepCopy();
        copy.put("doc_id", doc.path("doc_id").asText() + "~" + k);
        copy.put("title", names.rename(doc.path("title").asText(), k));
        copy.put("text", names.rename(doc.path("text").asText(), k));
        return copy;
    }
}
