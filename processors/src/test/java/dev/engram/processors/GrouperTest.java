package dev.engram.processors;

import static dev.engram.processors.MemoryFixture.NS;
import static dev.engram.processors.MemoryFixture.surface;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.MemoryChange;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.PairDecision;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GrouperTest {

    private final MemoryFixture memory = new MemoryFixture();
    private final MemoryTransaction tx = memory.begin();
    private final Grouper grouper = new Grouper(tx);

    private void add(String id, EntityType type) {
        tx.entities().put(Keys.of(NS, id), surface(id, id, id, type));
        tx.members().put(Keys.of(NS, id, id), id);
    }

    private void pair(String a, String b, PairDecision.Kind kind, double score, String rule) {
        PairDecision d = new PairDecision(NS, a, b, kind, rule, score, List.of(rule + " evidence"), MemoryFixture.NOW);
        tx.pairs().put(Keys.of(NS, a, b), d);
        tx.pairs().put(Keys.of(NS, b, a), d.mirrored());
    }

    private String canonical(String id) {
        return tx.entities().get(Keys.of(NS, id)).canonical();
    }

    private List<MemoryChange.EntityDecision> decisions() {
        return tx.changes().stream().map(c -> (MemoryChange.EntityDecision) c).toList();
    }

    @Test
    void mergeDecisionsMakeGroupsNamedByTheirSmallestId() {
        add("a1", EntityType.PERSON);
        add("b2", EntityType.PERSON);
        add("c3", EntityType.OTHER);
        pair("a1", "b2", PairDecision.Kind.MERGE, 0.9, "acronym");
        pair("b2", "c3", PairDecision.Kind.MERGE, 0.8, "partial_name");

        grouper.regroup(Set.of("c3"));

        assertThat(List.of(canonical("a1"), canonical("b2"), canonical("c3"))).containsOnly("a1");
        assertThat(memory.keys("memory-entity-members")).isEmpty();
        assertThat(tx.members().get(Keys.of(NS, "a1", "b2"))).isEqualTo("b2");
        assertThat(tx.members().get(Keys.of(NS, "a1", "c3"))).isEqualTo("c3");
        assertThat(tx.members().get(Keys.of(NS, "c3", "c3"))).isNull();
        assertThat(tx.state().entities()).isEqualTo(-2);
        assertThat(decisions())
                .extracting(
                        MemoryChange.EntityDecision::decision,
                        MemoryChange.EntityDecision::entityId,
                        MemoryChange.EntityDecision::otherId,
                        MemoryChange.EntityDecision::rule)
                .containsExactly(
                        tuple(MemoryChange.EntityDecision.Kind.MERGE, "b2", "a1", "acronym"),
                        tuple(MemoryChange.EntityDecision.Kind.MERGE, "c3", "a1", "partial_name"));
        assertThat(decisions().get(1).evidence()).containsExactly("partial_name evidence");
    }

    @Test
    void incompatibleTypesStayApartUnlessAnOperatorMergedThem() {
        add("a1", EntityType.PERSON);
        add("b2", EntityType.PLACE);
        pair("a1", "b2", PairDecision.Kind.MERGE, 0.95, "variant");

        grouper.regroup(Set.of("a1"));
        assertThat(canonical("b2")).isEqualTo("b2");
        assertThat(tx.changes()).isEmpty();

        pair("a1", "b2", PairDecision.Kind.MERGE, 1, "operator");
        grouper.regroup(Set.of("a1"));
        assertThat(canonical("b2")).isEqualTo("a1");
    }

    @Test
    void surfacesKeptApartAreNeverGroupedEvenThroughOthersAndMergesGoInScoreOrder() {
        add("a1", EntityType.PERSON);
        add("b2", EntityType.PERSON);
        add("c3", EntityType.PERSON);
        pair("a1", "c3", PairDecision.Kind.MERGE, 0.6, "partial_name");
        pair("b2", "c3", PairDecision.Kind.MERGE, 0.9, "acronym");
        pair("a1", "b2", PairDecision.Kind.REVIEW, 0.5, "ambiguous");

        grouper.regroup(Set.of("a1"));

        assertThat(canonical("a1")).isEqualTo("a1");
        assertThat(canonical("b2")).isEqualTo("b2");
        assertThat(canonical("c3"))
                .as("the stronger merge wins, the weaker would join a review")
                .isEqualTo("b2");
        assertThat(tx.state().entities()).isEqualTo(-1);
    }

    @Test
    void aSurfaceThatLeavesItsGroupIsUnmergedAndCountedAgain() {
        add("a1", EntityType.PERSON);
        EntityRecord merged = surface("b2", "b2", "b2", EntityType.PERSON).withCanonical("a1");
        tx.entities().put(Keys.of(NS, "b2"), merged);
        tx.members().put(Keys.of(NS, "a1", "b2"), "b2");

        grouper.regroup(Set.of("b2", "gone"));

        assertThat(canonical("b2")).isEqualTo("b2");
        assertThat(tx.members().get(Keys.of(NS, "a1", "b2"))).isNull();
        assertThat(tx.members().get(Keys.of(NS, "b2", "b2"))).isEqualTo("b2");
        assertThat(tx.state().entities()).isEqualTo(1);
        assertThat(decisions()).singleElement().satisfies(d -> {
            assertThat(d.decision()).isEqualTo(MemoryChange.EntityDecision.Kind.UNMERGE);
            assertThat(d.otherId()).isEqualTo("a1");
            assertThat(d.rule()).isEqualTo("regrouped");
        });
    }
}
