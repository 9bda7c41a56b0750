package dev.engram.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.MemoryChange;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class MetersTest {

    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final Meters meters = new Meters(registry);

    /** The series of a meter, each as its tag values joined by "/" in the order of {@code tags}. */
    private List<String> series(String name, String... tags) {
        return registry.find(name).meters().stream()
                .map(Meter::getId)
                .map(id -> List.of(tags).stream().map(id::getTag).collect(Collectors.joining("/")))
                .toList();
    }

    private double count(String name, String tag, String value) {
        return registry.get(name).tag(tag, value).counter().count();
    }

    @Test
    void aSinksMetersExistAtZeroOnceItIsRegistered() {
        meters.registerSink(Meters.Sink.NEO4J);
        assertThat(series(Meters.SINK_RECORDS, "sink", "outcome"))
                .containsExactlyInAnyOrder("neo4j/applied", "neo4j/superseded");
        assertThat(series(Meters.SINK_WRITES, "sink", "outcome")).containsExactlyInAnyOrder("neo4j/ok", "neo4j/failed");
        assertThat(series(Meters.SINK_COMPENSATIONS, "sink", "outcome"))
                .containsExactlyInAnyOrder("neo4j/compensated", "neo4j/repaired");
        assertThat(series(Meters.SINK_RETRIES, "sink")).containsExactly("neo4j");
        assertThat(series(Meters.SINK_PAUSES, "sink")).containsExactly("neo4j");
        assertThat(series(Meters.SINK_BATCH, "sink")).containsExactly("neo4j");
    }

    @Test
    void everyFixedTagValueIsRegisteredFromTheStartUnderTheNameDashboardsUse() {
        assertThat(series(Meters.DOCUMENTS, "outcome"))
                .containsExactlyInAnyOrder("upserted", "unchanged", "deleted", "unknown_delete", "dead_lettered");
        assertThat(series(Meters.PASSAGES, "op")).containsExactlyInAnyOrder("upsert", "retract");
        assertThat(series(Meters.DEAD_LETTERS, "stage", "cause"))
                .containsExactlyInAnyOrder(
                        "read/malformed_json",
                        "read/schema",
                        "read/invalid_utf8",
                        "read/too_large",
                        "read/key_mismatch",
                        "construct/key_mismatch",
                        "read/null_value",
                        "read/error",
                        "understand/extractor_error",
                        "understand/extractor_unavailable",
                        "understand/error",
                        "construct/bad_command",
                        "construct/bad_compensation",
                        "construct/error",
                        "read/undecodable",
                        "understand/undecodable",
                        "construct/undecodable",
                        "mirror/undecodable",
                        "read/unwritable",
                        "understand/unwritable",
                        "construct/unwritable");
        assertThat(series(Meters.EXTRACTION_CACHE, "result")).containsExactlyInAnyOrder("hit", "miss", "invalid");
        assertThat(series(Meters.REJECTED, "kind")).containsExactlyInAnyOrder("entity", "fact");
        assertThat(series(Meters.STALE, "kind")).containsExactlyInAnyOrder("passage", "manifest");
        assertThat(series(Meters.MEMORY_CHANGES, "type"))
                .containsExactlyInAnyOrder(
                        "passage_added",
                        "passage_removed",
                        "entity_created",
                        "entity_removed",
                        "link_added",
                        "link_removed",
                        "document_status",
                        "entity_decision");
        assertThat(series(Meters.RESOLUTION, "decision"))
                .containsExactlyInAnyOrder("update", "merge", "unmerge", "review", "defer", "cleared", "split");
        assertThat(series(Meters.RESOLUTION_SKIPPED)).hasSize(1);
        assertThat(series(Meters.THEME_SUMMARIES, "kind"))
                .containsExactlyInAnyOrder("extractive", "abstractive", "failed");
        assertThat(series(Meters.SNAPSHOT_BUILDS, "how", "outcome"))
                .containsExactlyInAnyOrder(
                        "inline/ok",
                        "inline/failed",
                        "background/ok",
                        "background/failed",
                        "recent/ok",
                        "recent/failed");
        assertThat(series(Meters.VECTOR_INDEX_WRITES, "op")).containsExactlyInAnyOrder("write", "delete");
        assertThat(series(Meters.VECTOR_INDEX_UNAVAILABLE)).hasSize(1);
        assertThat(series(Meters.MIRROR_RECORDS, "op")).containsExactlyInAnyOrder("upsert", "delete", "repair");
        assertThat(series(Meters.MIRROR_DRIFT, "finding")).containsExactlyInAnyOrder("missing", "stale", "orphaned");
        assertThat(series(Meters.MIRROR_DRIFT_REPAIRED)).hasSize(1);
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.measure())
                .allSatisfy(ms -> assertThat(ms.getValue()).isZero()));
    }

    @Test
    void embeddedTextsAreCountedByWhereTheirVectorCameFrom() {
        long[] counts = {7, 2};
        meters.embeddingTexts(counts, c -> c[0], c -> c[1]);
        counts[0] = 9;

        assertThat(meters.registry()
                        .get(Meters.EMBEDDING_TEXTS)
                        .tag("source", "model")
                        .functionCounter()
                        .count())
                .isEqualTo(9);
        assertThat(meters.registry()
                        .get(Meters.EMBEDDING_TEXTS)
                        .tag("source", "reused")
                        .functionCounter()
                        .count())
                .isEqualTo(2);
    }

    @Test
    void eachEnumCountsUnderItsTagValue() {
        meters.passages(Meters.PassageOp.RETRACT, 3);
        meters.deadLetter(DeadLetter.Stage.READ, DeadLetter.Cause.MALFORMED_JSON);
        meters.rejected(Meters.RejectedKind.FACT);
        meters.stale(Meters.StaleKind.MANIFEST);
        meters.memoryChange(MemoryChange.Type.ENTITY_DECISION);
        meters.resolution(MemoryChange.EntityDecision.Kind.SPLIT);
        meters.extractionCache(true);

        assertThat(count(Meters.PASSAGES, "op", "retract")).isEqualTo(3);
        assertThat(registry.get(Meters.DEAD_LETTERS)
                        .tag("stage", "read")
                        .tag("cause", "malformed_json")
                        .functionCounter()
                        .count())
                .isEqualTo(1);
        assertThat(count(Meters.REJECTED, "kind", "fact")).isEqualTo(1);
        assertThat(count(Meters.STALE, "kind", "manifest")).isEqualTo(1);
        assertThat(count(Meters.MEMORY_CHANGES, "type", "entity_decision")).isEqualTo(1);
        assertThat(count(Meters.RESOLUTION, "decision", "split")).isEqualTo(1);
        assertThat(count(Meters.EXTRACTION_CACHE, "result", "hit")).isEqualTo(1);
    }

    /**
     * Documents and dead letters are the totals the stream tasks keep in their stores, a series per task: a task that
     * publishes a total again replaces it (a replayed record does not add), and a task that closes takes its series
     * with it.
     */
    @Test
    void documentsAndDeadLettersAreTheTotalsOfTheTasksOfThisInstance() {
        String unknown = Meters.documentsKey(Meters.DocumentOutcome.UNKNOWN_DELETE);
        meters.total("0_0/read-tally", unknown, 3);
        meters.total("0_1/read-tally", unknown, 2);
        meters.total("0_0/read-tally", unknown, 3); // the same total published again: no change
        assertThat(sum(Meters.DOCUMENTS, "outcome", "unknown_delete")).isEqualTo(5);
        assertThat(registry.get(Meters.DOCUMENTS)
                        .tags("outcome", "unknown_delete", "task", "0_1/read-tally")
                        .functionCounter()
                        .count())
                .isEqualTo(2);
        meters.forgetTotals("0_1/read-tally");
        assertThat(sum(Meters.DOCUMENTS, "outcome", "unknown_delete")).isEqualTo(3);
        assertThat(registry.find(Meters.DOCUMENTS).tag("task", "0_1/read-tally").meters())
                .isEmpty();
        meters.total("1_0/memory-tally", Meters.deadLettersKey(DeadLetter.Stage.CONSTRUCT, DeadLetter.Cause.ERROR), 4);
        assertThat(sum(Meters.DEAD_LETTERS, "cause", "error")).isEqualTo(4);
    }

    private double sum(String name, String tag, String value) {
        return registry.find(name).tag(tag, value).functionCounters().stream()
                .mapToDouble(FunctionCounter::count)
                .sum();
    }
}
