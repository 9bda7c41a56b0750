package dev.engram.processors;

import static dev.engram.processors.MemoryFixture.NS;
import static dev.engram.processors.MemoryFixture.entity;
import static dev.engram.processors.MemoryFixture.extraction;
import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.Embeddings;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryChange;
import dev.engram.stores.EntityNames;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoredPassage;
import dev.engram.stores.StoredVectors;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MentionLedgerTest {

    private static final float[] ADA_VECTOR = {1, 0, 0};
    private static final float[] OTHER_VECTOR = {0, 1, 0};

    private final MemoryFixture memory = new MemoryFixture();
    /** Every mention of Ada here is described as a mathematician: one sense, one surface. */
    private final String ada = EntityNames.surfaceId(NS, "Ada Lovelace", EntityType.PERSON, "a mathematician");

    private final String london = EntityNames.surfaceId(NS, "London", EntityType.PLACE, "a city");

    private static EntityRecord surfaceIn(MemoryTransaction tx, String sid) {
        return tx.entities().get(Keys.of(NS, sid));
    }

    /** Links in a committed transaction of its own, as a passage stored with its embeddings. */
    private void linked(String passageId, String documentId, Extraction x, float[]... vectors) {
        MemoryTransaction tx = memory.begin();
        new MentionLedger(tx).link(passageId, documentId, null, x, List.of(vectors));
        tx.passages()
                .put(
                        Keys.of(NS, passageId),
                        new StoredPassage(
                                NS, documentId, passageId, 1, 0, "h", "T", List.of(), "text", 0, 4, x, List.of(), "e"));
        tx.embeddings()
                .put(
                        Keys.of(NS, passageId),
                        new Embeddings(new float[3], new float[3], List.of(vectors), List.of(), List.of()));
        tx.commit();
    }

    @Test
    void aPassagesMentionsBecomeSurfacesWithCountsFormsAliasesAndARepresentative() {
        MemoryTransaction tx = memory.begin();
        MentionLedger ledger = new MentionLedger(tx);

        List<String> ids = ledger.link(
                "p1",
                "doc",
                null,
                extraction(
                        entity("Ada Lovelace", EntityType.PERSON, "a mathematician", "Lovelace", "Ada Lovelace"),
                        entity("London", EntityType.PLACE, "a city"),
                        entity("ada lovelace", EntityType.PERSON, "", "Countess of Lovelace")),
                List.of(ADA_VECTOR, OTHER_VECTOR, OTHER_VECTOR));

        assertThat(ids).containsExactly(ada, london);
        EntityRecord a = surfaceIn(tx, ada);
        assertThat(a.name()).isEqualTo("Ada Lovelace");
        assertThat(a.normalized()).isEqualTo("ada lovelace");
        assertThat(a.mentions()).as("one span per mention").isEqualTo(2);
        assertThat(a.passages()).isEqualTo(1);
        assertThat(a.aliases())
                .as("normalized, without the name itself")
                .containsOnlyKeys("lovelace", "countess of lovelace");
        assertThat(a.description()).isEqualTo("a mathematician");
        assertThat(a.representative()).isEqualTo("p1");
        assertThat(a.lsh()).hasSize(4).isEqualTo(BlockingIndex.Lsh.buckets(ADA_VECTOR));
        assertThat(a.canonical()).isEqualTo(ada);
        assertThat(StoredVectors.decode(tx.entityVectors().get(Keys.of(NS, ada))))
                .containsExactly(ADA_VECTOR);
        assertThat(tx.members().get(Keys.of(NS, ada, ada))).isEqualTo("ada lovelace");
        MentionRecord m = tx.mentions().get(Keys.of(NS, ada, "p1"));
        assertThat(m.operation()).isEqualTo("create");
        assertThat(m.aliasForms()).containsExactly("Countess of Lovelace", "Lovelace");
        assertThat(tx.passageEntities().get(Keys.of(NS, "p1")))
                .isEqualTo(ada + " person Ada Lovelace\n" + london + " place London\n");
        assertThat(tx.changes())
                .extracting(MemoryChange.Type::of)
                .containsExactly(
                        MemoryChange.Type.ENTITY_CREATED,
                        MemoryChange.Type.ENTITY_CREATED,
                        MemoryChange.Type.LINK_ADDED,
                        MemoryChange.Type.LINK_ADDED);
        assertThat(tx.changes()).extracting(MemoryChange::version).containsExactly(1L, 2L, 3L, 4L);
        assertThat(tx.state().surfaces()).isEqualTo(2);
        assertThat(tx.state().entities()).isEqualTo(2);
        assertThat(ledger.touched()).isEqualTo(Map.of(ada, Optional.empty(), london, Optional.empty()));
        assertThat(memory.keys(StateStores.MEMORY_ENTITIES.name()))
                .as("staged, not stored")
                .isEmpty();
    }

    @Test
    void theRepresentativeIsTheMentionInTheSmallestPassageIdWhateverTheOrder() {
        linked(
                "p5",
                "doc",
                extraction(entity("Ada Lovelace", EntityType.PERSON, "a mathematician who came later")),
                OTHER_VECTOR);
        EntityRecord before = memory.begin().entities().get(Keys.of(NS, ada));

        MemoryTransaction tx = memory.begin();
        MentionLedger ledger = new MentionLedger(tx);
        ledger.link(
                "p2",
                "doc",
                null,
                extraction(entity("ADA LOVELACE", EntityType.PERSON, "a mathematician who came earlier")),
                List.of(ADA_VECTOR));
        EntityRecord a = surfaceIn(tx, ada);

        assertThat(a.representative()).isEqualTo("p2");
        assertThat(a.description()).isEqualTo("a mathematician who came earlier");
        assertThat(a.lsh()).isEqualTo(BlockingIndex.Lsh.buckets(ADA_VECTOR));
        assertThat(StoredVectors.decode(tx.entityVectors().get(Keys.of(NS, ada))))
                .containsExactly(ADA_VECTOR);
        assertThat(a.passages()).isEqualTo(2);
        assertThat(a.forms()).containsOnly(Map.entry("Ada Lovelace", 1), Map.entry("ADA LOVELACE", 1));
        assertThat(a.name()).as("ties go to the smallest form").isEqualTo("ADA LOVELACE");
        assertThat(tx.mentions().get(Keys.of(NS, ada, "p2")).operation()).isEqualTo("update");
        assertThat(ledger.touched()).containsExactly(Map.entry(ada, Optional.of(before)));
        assertThat(tx.changes())
                .filteredOn(c -> c instanceof MemoryChange.EntityDecision)
                .singleElement()
                .satisfies(c -> {
                    MemoryChange.EntityDecision d = (MemoryChange.EntityDecision) c;
                    assertThat(d.decision()).isEqualTo(MemoryChange.EntityDecision.Kind.UPDATE);
                    assertThat(d.rule()).isEqualTo("aliases_description");
                    assertThat(d.entityId()).isEqualTo(ada);
                });
    }

    @Test
    void unlinkingCountsDownAndTakesTheNextRepresentativeFromTheStoredPassage() {
        linked(
                "p1",
                "doc",
                extraction(entity("Ada Lovelace", EntityType.PERSON, "a mathematician who came first", "Lovelace")),
                ADA_VECTOR);
        linked(
                "p2",
                "doc",
                extraction(entity("Ada Lovelace", EntityType.PERSON, "a mathematician who came second")),
                OTHER_VECTOR);

        MemoryTransaction tx = memory.begin();
        MentionLedger ledger = new MentionLedger(tx);
        ledger.unlink("p1", List.of(ada));
        EntityRecord a = surfaceIn(tx, ada);

        assertThat(a.passages()).isEqualTo(1);
        assertThat(a.mentions()).isEqualTo(1);
        assertThat(a.aliases()).isEmpty();
        assertThat(a.representative()).isEqualTo("p2");
        assertThat(a.description()).isEqualTo("a mathematician who came second");
        assertThat(a.lsh()).isEqualTo(BlockingIndex.Lsh.buckets(OTHER_VECTOR));
        assertThat(StoredVectors.decode(tx.entityVectors().get(Keys.of(NS, ada))))
                .containsExactly(OTHER_VECTOR);
        assertThat(tx.mentions().get(Keys.of(NS, ada, "p1"))).isNull();
        assertThat(tx.passageEntities().get(Keys.of(NS, "p1"))).isNull();
        assertThat(tx.changes()).singleElement().isInstanceOf(MemoryChange.LinkRemoved.class);
        assertThat(ledger.touched()).containsOnlyKeys(ada);
    }

    @Test
    void aSurfaceLeavesMemoryWithItsLastMention() {
        linked("p1", "doc", extraction(entity("London", EntityType.PLACE, "a city")), OTHER_VECTOR);

        MemoryTransaction tx = memory.begin();
        MentionLedger ledger = new MentionLedger(tx);
        ledger.unlink("p1", List.of(london, "not-linked"));

        assertThat(surfaceIn(tx, london)).isNull();
        assertThat(tx.entityVectors().get(Keys.of(NS, london))).isNull();
        assertThat(tx.members().get(Keys.of(NS, london, london))).isNull();
        assertThat(tx.changes())
                .extracting(MemoryChange.Type::of)
                .containsExactly(MemoryChange.Type.LINK_REMOVED, MemoryChange.Type.ENTITY_REMOVED);
        assertThat(tx.changes()).extracting(MemoryChange::version).containsExactly(3L, 4L);
        assertThat(tx.state().surfaces()).isZero();
        assertThat(tx.state().entities()).isZero();
        assertThat(ledger.touched()).containsOnlyKeys(london);
    }

    @Test
    void theDisplayNameIsTheMostUsedFormAndTiesGoToTheSmallest() {
        assertThat(MentionLedger.displayName(Map.of("Ada", 2, "ADA", 2, "ada", 1)))
                .isEqualTo("ADA");
        assertThat(MentionLedger.displayName(Map.of("Ada", 3, "ADA", 2))).isEqualTo("Ada");
    }
}
