package dev.engram.processors;

import static dev.engram.processors.MemoryFixture.NS;
import static dev.engram.processors.MemoryFixture.entity;
import static dev.engram.processors.MemoryFixture.extraction;
import static dev.engram.processors.MemoryFixture.surface;
import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MemoryCommand;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.PairDecision;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class PairDeciderTest {

    private static final EntityRecord NAVY =
            surface("n1", "United States Navy", "united states navy", EntityType.ORGANIZATION);
    private static final EntityRecord USN = surface("u1", "USN", "usn", EntityType.ORGANIZATION);

    private final MemoryFixture memory = new MemoryFixture();
    private final PairDecider.Names names = new PairDecider.Names();

    /** The parts of one record. */
    private final class Step {
        final MemoryTransaction tx = memory.begin();
        final BlockingIndex index = new BlockingIndex(tx, () -> {});
        final PairDecider decider = new PairDecider(tx, index, new Contexts(tx), names, MergeModel.RULES);
        final MentionLedger ledger = new MentionLedger(tx);

        /** Stores and indexes surfaces as they are. */
        void add(EntityRecord... surfaces) {
            for (EntityRecord e : surfaces) {
                tx.entities().put(Keys.of(NS, e.id()), e);
                index.reindex(e.id(), null, e);
            }
        }

        /** Links a passage's mentions and indexes the surfaces it created. */
        void link(String passageId, String documentId, String... personNames) {
            List<String> ids = ledger.link(
                    passageId,
                    documentId,
                    null,
                    extraction(List.of(personNames).stream()
                            .map(n -> entity(n, EntityType.PERSON, ""))
                            .toArray(Extraction.Entity[]::new)),
                    List.of());
            for (String id : ids) {
                if (ledger.touched().get(id).isEmpty()) {
                    index.reindex(id, null, record(id));
                }
            }
        }

        EntityRecord record(String id) {
            return tx.entities().get(Keys.of(NS, id));
        }

        PairDecision pair(String a, String b) {
            return tx.pairs().get(Keys.of(NS, a, b));
        }

        List<MemoryChange.EntityDecision> decisions() {
            return tx.changes().stream()
                    .filter(c -> c instanceof MemoryChange.EntityDecision)
                    .map(c -> (MemoryChange.EntityDecision) c)
                    .toList();
        }
    }

    private static String person(String name) {
        return EntityNames.surfaceId(NS, name, EntityType.PERSON);
    }

    @Test
    void anAcronymMergesWithItsOnlyExpansionAndTheDecisionIsStoredBothWays() {
        Step step = new Step();
        step.add(NAVY, USN);

        assertThat(step.decider.redecide(USN, false)).containsExactly("n1");

        PairDecision d = step.pair("u1", "n1");
        assertThat(d.decision()).isEqualTo(PairDecision.Kind.MERGE);
        assertThat(d.rule()).isEqualTo("acronym");
        assertThat(d.score()).isEqualTo(0.9);
        assertThat(d.at()).isEqualTo(MemoryFixture.NOW);
        assertThat(step.pair("n1", "u1")).isEqualTo(d.mirrored());
        assertThat(step.tx.changes()).as("merges show when the groups change").isEmpty();
        step.tx.commit();

        Step again = new Step();
        assertThat(again.decider.redecide(USN, false)).as("nothing changed").isEmpty();
        assertThat(again.decider.redecide(NAVY, true)).isEmpty();
    }

    @Test
    void anOperatorsDecisionOverridesTheRulesUntilCleared() {
        Step step = new Step();
        step.add(NAVY, USN);
        step.decider.redecide(USN, false);
        step.tx.commit();

        Step split = new Step();
        split.decider.override(new MemoryCommand(NS, MemoryCommand.Op.SPLIT, "u1", "n1", "another USN", Instant.EPOCH));
        assertThat(split.tx.overrides().get(Keys.of(NS, "n1", "u1")).decision()).isEqualTo(PairDecision.Kind.SPLIT);
        assertThat(split.decider.redecide(USN, false)).containsExactly("n1");
        assertThat(split.pair("n1", "u1").decision()).isEqualTo(PairDecision.Kind.SPLIT);
        assertThat(split.pair("u1", "n1").rule()).isEqualTo("operator");
        assertThat(split.pair("u1", "n1").evidence()).containsExactly("operator: another USN");
        assertThat(split.decisions()).singleElement().satisfies(c -> {
            assertThat(c.decision()).isEqualTo(MemoryChange.EntityDecision.Kind.SPLIT);
            assertThat(c.entityId()).isEqualTo("u1");
            assertThat(c.otherId()).isEqualTo("n1");
        });
        split.tx.commit();

        Step clear = new Step();
        clear.decider.override(new MemoryCommand(NS, MemoryCommand.Op.CLEAR, "n1", "u1", "", Instant.EPOCH));
        assertThat(clear.tx.overrides().get(Keys.of(NS, "u1", "n1"))).isNull();
        assertThat(clear.decider.redecide(NAVY, false)).containsExactly("u1");
        assertThat(clear.pair("u1", "n1").rule()).isEqualTo("acronym");
    }

    @Test
    void aDecisionThatNoLongerHoldsIsClearedAndASurfaceThatLeftTakesItsPairsAlong() {
        Step step = new Step();
        step.add(NAVY, USN);
        step.decider.redecide(USN, false);
        step.tx.commit();

        Step gone = new Step();
        gone.tx.entities().delete(Keys.of(NS, "n1"));
        gone.index.reindex("n1", NAVY, null);
        assertThat(gone.decider.forget("n1")).containsExactly("u1");
        assertThat(gone.pair("u1", "n1")).isNull();
        assertThat(gone.pair("n1", "u1")).isNull();
        assertThat(gone.decisions()).singleElement().satisfies(c -> {
            assertThat(c.decision()).isEqualTo(MemoryChange.EntityDecision.Kind.CLEARED);
            assertThat(c.entityId()).isEqualTo("u1");
            assertThat(c.evidence()).containsExactly("entity left memory");
        });

        Step stale = new Step();
        stale.tx.entities().delete(Keys.of(NS, "n1"));
        assertThat(stale.decider.redecide(USN, true)).containsExactly("n1");
        assertThat(stale.pair("u1", "n1")).isNull();
        assertThat(stale.pair("n1", "u1")).isNull();
        assertThat(stale.decisions())
                .extracting(MemoryChange.EntityDecision::decision)
                .containsExactly(MemoryChange.EntityDecision.Kind.CLEARED);
    }

    @Test
    void aSurnameWithoutSharedContextIsDeferred() {
        Step step = new Step();
        step.link("p1", "bio", "Charles Babbage");
        step.link("p2", "engine", "Babbage");
        String babbage = person("Babbage");
        String charles = person("Charles Babbage");

        assertThat(step.decider.redecide(step.record(babbage), false)).containsExactly(charles);
        assertThat(step.pair(babbage, charles).decision()).isEqualTo(PairDecision.Kind.DEFER);
        assertThat(step.pair(babbage, charles).rule()).isEqualTo("partial_name");
        assertThat(step.decisions())
                .extracting(MemoryChange.EntityDecision::decision)
                .containsExactly(MemoryChange.EntityDecision.Kind.DEFER);
    }

    @Test
    void aSurnameInTheDocumentOfTheFullNameMerges() {
        Step step = new Step();
        step.link("p1", "bio", "Charles Babbage");
        step.link("p2", "bio", "Babbage");
        String babbage = person("Babbage");
        String charles = person("Charles Babbage");

        assertThat(step.decider.redecide(step.record(babbage), false)).containsExactly(charles);
        assertThat(step.pair(babbage, charles).decision()).isEqualTo(PairDecision.Kind.MERGE);
        assertThat(step.pair(babbage, charles).evidence()).contains("both in document bio");
        assertThat(step.decisions()).isEmpty();
    }

    @Test
    void aSecondLongNameMakesTheShortOneAmbiguousAndItsPairsAreDecidedAgain() {
        Step step = new Step();
        step.link("p1", "bio", "Charles Babbage", "Babbage");
        String babbage = person("Babbage");
        String charles = person("Charles Babbage");
        step.decider.redecide(step.record(babbage), false);
        assertThat(step.pair(babbage, charles).decision()).isEqualTo(PairDecision.Kind.MERGE);
        step.tx.commit();

        Step next = new Step();
        next.link("p2", "bio", "Benjamin Babbage");
        String benjamin = person("Benjamin Babbage");
        EntityRecord charlesRecord = next.record(charles);
        assertThat(next.decider.shortFormNeighbours(benjamin, null, next.record(benjamin)))
                .as("the surname could stand for the newcomer too")
                .containsExactly(babbage);
        assertThat(next.decider.shortFormNeighbours(charles, charlesRecord, charlesRecord))
                .as("nothing a short form depends on changed")
                .isEmpty();
        next.decider.redecide(next.record(babbage), false);
        assertThat(next.pair(babbage, charles).decision()).isEqualTo(PairDecision.Kind.REVIEW);
        assertThat(next.pair(babbage, charles).rule()).isEqualTo("ambiguous");
        assertThat(next.pair(babbage, benjamin).decision()).isEqualTo(PairDecision.Kind.REVIEW);
    }

    @Test
    void aFullNameFoundTypedAndUntypedIsOneReferentForItsSurname() {
        Step step = new Step();
        step.link("p1", "film", "Robert De Niro", "De Niro");
        // the same name where the extractor could not type it: no evidence of a second Robert De Niro
        step.add(surface("x1", "Robert De Niro", "robert de niro", EntityType.OTHER));
        String deNiro = person("De Niro");
        String robert = person("Robert De Niro");
        step.decider.redecide(step.record(deNiro), false);
        assertThat(step.decider.ambiguity(step.decider.surface(deNiro), PairRules.ShortForm.PARTIAL))
                .isEqualTo(1);
        assertThat(step.pair(deNiro, robert).decision()).isEqualTo(PairDecision.Kind.MERGE);
        step.tx.commit();

        // another full name with that surname is another referent: the surname could stand for either
        Step next = new Step();
        next.add(surface("x2", "Raphael De Niro", "raphael de niro", EntityType.PERSON));
        next.decider.redecide(next.record(deNiro), false);
        assertThat(next.decider.ambiguity(next.decider.surface(deNiro), PairRules.ShortForm.PARTIAL))
                .isEqualTo(2);
        assertThat(next.pair(deNiro, robert).decision()).isEqualTo(PairDecision.Kind.REVIEW);
    }

    @Test
    void aParsedNameIsReusedForTheSameRecordAndParsedAgainOnceTheSurfaceChanged() {
        PairDecider.Names parsed = new PairDecider.Names();
        EntityRecord before = surface("s1", "Charles Babbage", "charles babbage", EntityType.PERSON);
        PairDecider.Names.Parsed first = parsed.of("ns/s1", before);
        assertThat(parsed.of("ns/s1", surface("s1", "Charles Babbage", "charles babbage", EntityType.PERSON)))
                .isSameAs(first); // an equal record: nothing parsed again
        // the surface's most frequent written form changed: its parse follows, never the stale one
        EntityRecord after = surface("s1", "C. Babbage", "c babbage", EntityType.PERSON, "babbage");
        PairDecider.Names.Parsed second = parsed.of("ns/s1", after);
        assertThat(second.name().written()).isEqualTo("C. Babbage");
        assertThat(second.aliases()).containsExactly("babbage");
        assertThat(parsed.of("ns/s1", after)).isSameAs(second);
    }
}
