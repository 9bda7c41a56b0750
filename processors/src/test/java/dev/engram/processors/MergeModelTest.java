package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MergeModelTest {

    private static Map<String, Double> features(double coMentioned, double jaroWinkler) {
        Map<String, Double> f = new HashMap<>();
        MergeFeatures.NAMES.forEach(n -> f.put(n, 0.0));
        f.put("co_mentioned", coMentioned);
        f.put("jaro_winkler", jaroWinkler);
        return f;
    }

    @Test
    void theFitRecoversTheWeightsThatMadeTheLabels() {
        // labels drawn from a known logistic model: z = -2 + 4·co_mentioned + 1·jaro_winkler
        Random random = new Random(7);
        List<Map<String, Double>> x = new ArrayList<>();
        List<Boolean> y = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            double co = random.nextDouble();
            double jw = random.nextDouble();
            double p = 1 / (1 + Math.exp(-(-2 + 4 * co + jw)));
            x.add(features(co, jw));
            y.add(random.nextDouble() < p);
        }
        MergeModel m = MergeModel.fit("test", x, y, 1e-6);
        assertThat(m.intercept()).isCloseTo(-2, offset(0.15));
        assertThat(m.weights().get("co_mentioned")).isCloseTo(4, offset(0.2));
        assertThat(m.weights().get("jaro_winkler")).isCloseTo(1, offset(0.2));
        assertThat(m.weights().get("same_document"))
                .as("a feature that never varies gets no weight")
                .isZero();
    }

    @Test
    void aPenaltyKeepsWeightsFiniteWhereAFeatureSeparatesTheLabels() {
        List<Map<String, Double>> x = List.of(features(1, 0), features(1, 0), features(0, 0), features(0, 0));
        List<Boolean> y = List.of(true, true, false, false);
        MergeModel m = MergeModel.fit("separable", x, y, 0.01);
        assertThat(m.weights().get("co_mentioned")).isFinite().isPositive();
        assertThat(m.probability(features(1, 0))).isGreaterThan(0.9);
        assertThat(m.probability(features(0, 0))).isLessThan(0.1);
    }

    @Test
    void theShippedModelIsAFitModelOfKnownFeaturesWithItsHeldOutFigures() {
        MergeModel m = MergeModel.shipped();
        assertThat(m.byRulesAlone()).isFalse();
        assertThat(MergeFeatures.NAMES).containsAll(m.weights().keySet());
        assertThat(m.fit()).containsKeys("examples", "l2", "leave_one_source_out");
        assertThat(MergeModel.RULES.byRulesAlone()).isTrue();
    }

    @Test
    void aModelWithAWeightThatIsNoNumberIsRefusedWhenReadNotWhenItDecides() {
        for (String json : new String[] {
            "{\"id\":\"x\",\"intercept\":0,\"weights\":{\"co_mentioned\":null}}",
            "{\"intercept\":0,\"weights\":{}}",
            "{\"id\":\"x\",\"intercept\":\"many\",\"weights\":{}}",
            "not json"
        }) {
            assertThatThrownBy(() -> MergeModel.read(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8))))
                    .as(json)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not a merge model");
        }
        assertThatThrownBy(() -> new MergeModel("x", Double.NaN, Map.of(), Map.of()))
                .hasMessageContaining("intercept");
    }

    @Test
    void aModelWeighingAnUnknownFeatureIsRefused() {
        String json = "{\"id\":\"x\",\"intercept\":0,\"weights\":{\"shoe_size\":1}}";
        assertThatThrownBy(() -> MergeModel.read(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8))))
                .hasMessageContaining("shoe_size");
    }

    @Test
    void aConstraintWithholdsAMergeWhateverTheScore() {
        MergeModel always = new MergeModel("always", 50, Map.of(), Map.of());
        Map<String, Double> partial = features(0, 0.9);
        partial.put("partial", 1.0);
        assertThat(always.probability(partial)).isGreaterThan(0.99);
        assertThat(always.merges(partial))
                .as("a part of a name, and nothing beyond the name")
                .isFalse();
        partial.put("co_mentioned", 1 / 3.0);
        assertThat(always.merges(partial)).isTrue();
        partial.put("descriptions_conflict", 1.0);
        assertThat(always.merges(partial))
                .as("descriptions that name two referents")
                .isFalse();
        partial.put("same_document", 1.0);
        partial.put(MergeFeatures.ONE_DOCUMENT, 0.0);
        assertThat(always.merges(partial))
                .as("one session of a conversation is not one document")
                .isFalse();
        partial.put(MergeFeatures.ONE_DOCUMENT, 1.0);
        assertThat(always.merges(partial)).as("unless one document holds both").isTrue();

        Map<String, Double> bare = features(0, 0.9);
        bare.put("one_described", 1.0);
        assertThat(always.merges(bare)).as("a bare name beside a described one").isFalse();
        bare.put("same_document", 1.0); // one session, not one document
        assertThat(always.merges(bare))
                .as("a shared session is evidence beyond the name, as a document is")
                .isTrue();

        // a stored decision keeps only the features that are not zero: the constraints read the others as zero
        assertThat(always.merges(Map.of("partial", 1.0))).isFalse();
        assertThat(always.merges(Map.of("partial", 1.0, "co_mentioned", 1.0))).isTrue();
        assertThat(always.merges(Map.of("partial", 1.0, "same_document", 1.0, "descriptions_conflict", 1.0)))
                .isFalse();

        Map<String, Double> acronym = features(0, 0.2);
        acronym.put("acronym", 1.0);
        assertThat(always.merges(acronym))
                .as("an acronym needs nothing beyond its initials")
                .isTrue();
    }
}
