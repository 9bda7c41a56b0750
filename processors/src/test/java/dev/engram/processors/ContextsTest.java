package dev.engram.processors;

import static dev.engram.processors.MemoryFixture.NOW;
import static dev.engram.processors.MemoryFixture.NS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.Conversation;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.VectorCodec;
import dev.engram.stores.Keys;
import dev.engram.stores.MentionRecord;
import java.util.List;
import org.junit.jupiter.api.Test;

class ContextsTest {

    private final MemoryFixture memory = new MemoryFixture();

    private static void mention(MemoryTransaction tx, String surface, String passage, String document, float[] v) {
        mentionOnly(tx, surface, passage, document);
        tx.vectors().put(Keys.of(NS, passage), VectorCodec.toBytes(v));
    }

    private static void mentionOnly(MemoryTransaction tx, String surface, String passage, String document) {
        mentionIn(tx, surface, passage, document, null);
    }

    private static void mentionIn(
            MemoryTransaction tx, String surface, String passage, String document, String session) {
        tx.mentions()
                .put(
                        Keys.of(NS, surface, passage),
                        new MentionRecord(
                                1,
                                "Richard Wright",
                                EntityType.PERSON,
                                "",
                                List.of(),
                                List.of(),
                                document,
                                "x",
                                "upsert",
                                NOW,
                                List.of(),
                                session));
    }

    @Test
    void passagesThatSayTheSameThingsAreSharedContextAndOthersAreNot() {
        MemoryTransaction tx = memory.begin();
        mention(tx, "a", "p1", "d1", new float[] {1, 0, 0});
        mention(tx, "b", "p2", "d2", new float[] {0.95f, 0.31f, 0});
        mention(tx, "c", "p3", "d3", new float[] {0.6f, 0.8f, 0});
        Contexts contexts = new Contexts(tx);

        assertThat(contexts.shared("a", "b").evidence()).containsExactly("their passages alike (cosine 0.95)");
        assertThat(contexts.shared("a", "c").evidence())
                .as("cosine 0.6: about other things")
                .isEmpty();
        // a shared document comes first, and says so
        mention(tx, "e", "p4", "d1", new float[] {0, 0, 1});
        assertThat(new Contexts(tx).shared("a", "e").evidence()).containsExactly(SharedContext.SAME_DOCUMENT + "d1");
    }

    @Test
    void turnsOfOneSessionAreSharedContextAndOfAnotherSessionOrConversationNot() {
        MemoryTransaction tx = memory.begin();
        String caroline = new Conversation("Caroline", List.of("Caroline", "Melanie"), "3").sessionKey();
        String melanie = new Conversation("Melanie", List.of("Caroline", "Melanie"), "3").sessionKey();
        mentionIn(tx, "a", "p1", "turn-1", caroline);
        mentionIn(tx, "b", "p2", "turn-2", melanie);
        mentionIn(tx, "c", "p3", "turn-3", new Conversation("Jon", List.of("Jon", "Gina"), "3").sessionKey());
        mentionIn(tx, "d", "p4", "turn-4", new Conversation("Caroline", List.of("Melanie"), "4").sessionKey());

        assertThat(new Contexts(tx).shared("a", "b").evidence()).containsExactly("both in session 3");
        assertThat(new Contexts(tx).shared("a", "c").evidence())
                .as("session 3 of another conversation")
                .isEmpty();
        assertThat(new Contexts(tx).shared("a", "d").evidence()).isEmpty();
    }

    @Test
    void aSurfaceWithoutStoredVectorsSharesNoPassageContext() {
        MemoryTransaction tx = memory.begin();
        mention(tx, "a", "p1", "d1", new float[] {1, 0, 0});
        mentionOnly(tx, "b", "p9", "d9");
        assertThat(new Contexts(tx).shared("a", "b").evidence()).isEmpty();
    }

    @Test
    void sharedYearsAndNumbersAreNoContextAndOneSharedPlaceIsNotEnough() {
        MemoryTransaction tx = memory.begin();
        mentionOnly(tx, "a", "p1", "d1");
        mentionOnly(tx, "b", "p2", "d2");
        String common = "y2010 date 2010\nn5 number 5\nus place United States";
        tx.passageEntities().put(Keys.of(NS, "p1"), "a person Fort Dodge\n" + common);
        tx.passageEntities().put(Keys.of(NS, "p2"), "b place Fort Dodge\n" + common);
        assertThat(new Contexts(tx).shared("a", "b").evidence())
                .as("a year, a number and one place in common")
                .isEmpty();

        tx.passageEntities().put(Keys.of(NS, "p1"), "a person Fort Dodge\n" + common + "\nia place Iowa");
        tx.passageEntities().put(Keys.of(NS, "p2"), "b place Fort Dodge\n" + common + "\nia place Iowa");
        assertThat(new Contexts(tx).shared("a", "b").evidence())
                .containsExactly("both mentioned with \"Iowa\"", "both mentioned with \"United States\"");

        tx.passageEntities().put(Keys.of(NS, "p1"), "a person Fort Dodge\n" + common + "\nw person Webster");
        tx.passageEntities().put(Keys.of(NS, "p2"), "b place Fort Dodge\n" + common + "\nw person Webster");
        assertThat(new Contexts(tx).shared("a", "b").evidence())
                .as("one specific entity in common is enough")
                .containsExactly("both mentioned with \"United States\"", "both mentioned with \"Webster\"");
    }
}
