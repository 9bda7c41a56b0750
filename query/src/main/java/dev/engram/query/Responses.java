package dev.engram.query;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryCommand;
import dev.engram.schemas.Span;
import dev.engram.stores.DocumentGist;
import dev.engram.stores.PairDecision;
import dev.engram.stores.ReviewItem;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What the read side answers, one record per response and per listed item. They are written as JSON with snake_case
 * field names (see docs/http-api.md); the HTTP layer adds only {@code served_by}.
 */
public final class Responses {

    private Responses() {}

    /**
     * How far the memory behind an answer has got: the version of the namespace's last memory change and the input
     * position processed; on retrievals only, {@code graph_version} is the version the answers were ranked at, and
     * {@code whole_graph_version} that of the namespace's whole snapshot, below it while the passages written since are
     * read from a recent layer beside it ({@link GraphLoader#layers}).
     */
    public record Watermark(
            long version,
            int partition,
            long offset,
            Instant updatedAt,
            @JsonInclude(JsonInclude.Include.NON_NULL) Long graphVersion,
            @JsonInclude(JsonInclude.Include.NON_NULL) Long wholeGraphVersion) {}

    /** {@code GET /v1/namespaces/{ns}}. */
    public record Namespace(
            String namespace,
            long documents,
            long passages,
            long entities,
            long surfaces,
            Map<String, Long> documentsByStatus,
            Watermark watermark) {}

    /** {@code GET /v1/namespaces/{ns}/documents}: a page of documents in id order, and the cursor of the next. */
    public record DocumentList(
            String namespace,
            DocumentStatus status,
            List<DocumentSummary> documents,
            @JsonInclude(JsonInclude.Include.ALWAYS) String nextCursor) {}

    /** One document of a list: its status, version, title and how many of its passages are in memory. */
    public record DocumentSummary(
            String id,
            DocumentStatus status,
            long version,
            String title,
            String source,
            int passages,
            int present,
            Instant updatedAt) {}

    /** {@code GET /v1/namespaces/{ns}/documents/{id}}. */
    public record Document(
            String namespace,
            String id,
            long version,
            DocumentStatus status,
            String title,
            String source,
            Map<String, Object> metadata,
            Instant eventTime,
            Instant updatedAt,
            List<String> notes,
            List<DocumentPassage> passages,
            @JsonInclude(JsonInclude.Include.NON_NULL) Watermark watermark) {}

    /**
     * A passage of a document's manifest; the fields after {@code in_memory} are there once it is in memory, and
     * {@code construction} when the agent construction worked on it.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record DocumentPassage(
            String passageId,
            String contentHash,
            boolean inMemory,
            Integer ordinal,
            List<String> headings,
            Integer start,
            Integer end,
            String text,
            String memory,
            List<Extraction.Entity> entities,
            List<Extraction.Fact> facts,
            List<String> questions,
            String extractor,
            Extraction.Construction construction) {}

    /** {@code GET /v1/namespaces/{ns}/reviews}. */
    public record Reviews(String namespace, long total, List<ReviewItem> reviews, PendingPairs entityPairs) {}

    /** Entity pairs waiting for a person (review) or for more evidence (defer). */
    public record PendingPairs(long total, List<Decision> pairs) {}

    /**
     * A resolution decision about two surface entities, with their names; {@code features} are what the merge score
     * read, those that are not zero (empty where a rule or an operator decided alone).
     */
    public record Decision(
            String entityId,
            String entityName,
            String otherId,
            String otherName,
            PairDecision.Kind decision,
            String rule,
            double score,
            List<String> evidence,
            Map<String, Double> features,
            Instant at) {}

    /** {@code GET /v1/namespaces/{ns}/entities?name=}. */
    public record EntitiesByName(String namespace, String name, List<Entity> entities) {}

    /** {@code GET /v1/namespaces/{ns}/entities?like=}: entities nearest a text by meaning, nearest first. */
    public record EntitiesLike(String namespace, String like, List<Entity> entities) {}

    /** {@code GET /v1/namespaces/{ns}/relations}: the relation types the namespace's facts use. */
    public record RelationTypes(String namespace, int total, int establishedAfter, List<RelationType> relations) {}

    /** A relation type, the passages it occurs in, and whether it is {@code established} or {@code proposed}. */
    public record RelationType(String relation, int passages, String status) {}

    /** {@code GET /v1/namespaces/{ns}/entities/{id}}: the entity, with its namespace. */
    public record EntityInNamespace(
            String namespace, @JsonUnwrapped Entity entity) {}

    /**
     * A resolved entity: the surface entities resolution grouped, its aliases, one page of the passages that mention
     * it (with provenance) and the facts those passages state about it ({@code factCount} counts them), and the
     * decisions that touch it (at most 100). {@code mentions} and {@code passageCount} count every mention and, per
     * surface, every passage; {@code next}, when there are more passages, is the {@code after} of the next page.
     */
    public record Entity(
            String id,
            String name,
            EntityType type,
            List<String> aliases,
            String description,
            int mentions,
            int passageCount,
            List<Surface> surfaces,
            List<Mention> passages,
            int factCount,
            List<Fact> facts,
            List<Decision> decisions,
            String next) {}

    /** A surface entity: one normalized name and type. */
    public record Surface(String id, String name, EntityType type, int mentions, int passages, String description) {}

    /** One passage's mention of an entity, with its provenance. */
    public record Mention(
            String passageId,
            String documentId,
            String surfaceId,
            String form,
            int mentions,
            List<Span> spans,
            String extractor,
            String operation,
            Instant at) {}

    /** A fact about an entity, where it was stated and by which extractor. */
    public record Fact(
            String head,
            String relation,
            String tail,
            Span evidence,
            double confidence,
            String passageId,
            String documentId,
            String extractor) {}

    /** {@code GET /v1/namespaces/{ns}/merges}. */
    public record Merges(String namespace, long total, List<MergeGroup> merges) {}

    /** A resolved entity of more than one surface, with the merge decisions that made it. */
    public record MergeGroup(String id, List<MergedSurface> surfaces, List<Decision> decisions) {}

    public record MergedSurface(String id, String name, EntityType type, int mentions) {}

    /** {@code GET /v1/namespaces/{ns}/documents/{id}/gist}. */
    public record Gist(
            String namespace,
            String documentId,
            String title,
            List<String> gist,
            int passages,
            int windowSize,
            List<DocumentGist.Window> windows,
            Instant updatedAt) {}

    /** {@code GET /v1/namespaces/{ns}/themes}. */
    public record Themes(
            String namespace,
            Long computedAtVersion,
            Instant computedAt,
            int passages,
            int essential,
            long changesSince,
            List<Theme> themes) {}

    /** An eigen-theme with its summary ({@code extractive} or {@code abstractive}). */
    public record Theme(
            int rank,
            double eigenvalue,
            List<String> passageIds,
            List<Double> weights,
            String summary,
            String summaryKind,
            List<String> questions) {}

    /** {@code POST /v1/namespaces/{ns}/retrieve}. */
    public record Retrieved(
            String namespace,
            String mode,
            String query,
            int topK,
            Map<String, Double> params,
            List<Passage> results,
            Map<String, Object> explanation,
            Map<String, String> vectorSearch,
            Watermark watermark,
            double tookMs) {}

    /** A retrieved passage paired with its memory. */
    public record Passage(
            int rank,
            double score,
            String passageId,
            String documentId,
            String title,
            List<String> headings,
            String text,
            String memory,
            int start,
            int end) {}

    /** {@code POST /v1/namespaces/{ns}/answer}. */
    public record Answered(
            String namespace,
            String query,
            String answer,
            List<Citation> citations,
            List<Passage> evidence,
            Usage usage,
            String mode,
            Watermark watermark) {}

    /** A passage an answer cites: {@code evidence} is its 1-based position in {@code evidence}. */
    public record Citation(int evidence, String passageId, String documentId, String title) {}

    public record Usage(long promptTokens, long completionTokens) {}

    /** {@code POST /v1/namespaces/{ns}/merges}: the command is on the memory-commands topic. */
    public record CommandAccepted(String namespace, String status, MemoryCommand command) {}
}
