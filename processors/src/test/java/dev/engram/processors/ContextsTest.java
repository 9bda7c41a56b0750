package dev.engram.processors;

import static dev.engram.processors.MemoryFixture.NOW;
import static dev.engram.processors.MemoryFixture.NS;
import static org.assertj.core.api.Assertions.assertThat;

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
                                List.of()));
    }

    @Test
    void passagesThatSayTheSameThingsAreSharedContextAndOthersAreNot() {
        MemoryTransaction tx = memory.begin();
        mention(tx, "a", "p1", "d1", new float[] {1, 0, 0});
        mention(tx, "b", "p2", "d2", new float[] {0.95f, 0.31f, 0});
        mention(tx, "c", "p3", "d3", new float[] {0.6f, 0.8f, 0});
        Contexts contexts = new Contexts(tx);

        assertThat(contexts.shared("a", "b")).containsExactly("their passages alike (cosine 0.95)");
        assertThat(contexts.shared("a", "c"))
                .as("cosine 0.6: about other things")
                .isEmpty();
        // a shared document comes first, and says so
        mention(tx, "e", "p4", "d1", new float[] {0, 0, 1});
        assertThat(new Contexts(tx).shared("a", "e")).containsExactly(Contexts.SAME_DOCUMENT + "d1");
    }

    @Test
    void aSurfaceWithoutStoredVectorsSharesNoPassageContext() {
        MemoryTransaction tx = memory.begin();
        mention(tx, "a", "p1", "d1", new float[] {1, 0, 0});
        mentionOnly(tx, "b", "p9", "d9");
        assertThat(new Contexts(tx).shared("a", "b")).isEmpty();
    }
}
