package dev.engram.stores;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.Json;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PairDecisionTest {

    private static final Instant AT = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void onlyTheFeaturesThatAreNotZeroAreKeptAndTheyTravelWithTheDecision() {
        PairDecision d = new PairDecision(
                "ns",
                "a",
                "b",
                PairDecision.Kind.MERGE,
                "acronym",
                0.97,
                List.of("acronym of the initials"),
                AT,
                Map.of("acronym", 1.0, "co_mentioned", 0.0, "jaro_winkler", 0.41));
        assertThat(d.features()).containsOnlyKeys("acronym", "jaro_winkler");
        assertThat(d.mirrored().features()).isEqualTo(d.features());

        byte[] stored = StateStores.MEMORY_ENTITY_PAIRS.values().serializer().serialize("t", d);
        PairDecision read =
                StateStores.MEMORY_ENTITY_PAIRS.values().deserializer().deserialize("t", stored);
        assertThat(read).isEqualTo(d);
        assertThat(read.sameAs(d)).isTrue();
        assertThat(read.sameAs(new PairDecision("ns", "a", "b", d.decision(), d.rule(), d.score(), d.evidence(), AT)))
                .as("the same decision read from other features is another decision")
                .isFalse();
    }

    @Test
    void aDecisionStoredBeforeThereWereFeaturesReadsWithNone() {
        String before = "{\"namespace\":\"ns\",\"entity_id\":\"a\",\"other_id\":\"b\",\"decision\":\"merge\","
                + "\"rule\":\"acronym\",\"score\":0.9,\"evidence\":[\"x\"],\"at\":\"2026-01-01T00:00:00Z\"}";
        PairDecision read = StateStores.MEMORY_ENTITY_PAIRS
                .values()
                .deserializer()
                .deserialize("t", before.getBytes(StandardCharsets.UTF_8));
        assertThat(read.features()).isEmpty();
        assertThat(read.rule()).isEqualTo("acronym");
        assertThat(Json.toString(read)).contains("\"features\":{}");
    }
}
