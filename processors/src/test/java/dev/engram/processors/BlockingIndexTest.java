package dev.engram.processors;

import static dev.engram.processors.MemoryFixture.NS;
import static dev.engram.processors.MemoryFixture.surface;
import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.EntityType;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.StateStores;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BlockingIndexTest {

    private final MemoryFixture memory = new MemoryFixture();
    private final AtomicInteger skipped = new AtomicInteger();

    private static final EntityRecord NAVY = new EntityRecord(
            NS,
            "n1",
            "United States Navy",
            "united states navy",
            EntityType.ORGANIZATION,
            1,
            1,
            Map.of("United States Navy", 1),
            Map.of("usn", 1),
            "",
            "p",
            List.of(1, 2, 3, 4),
            "n1");
    private static final EntityRecord USN = surface("u1", "USN", "usn", EntityType.ORGANIZATION);
    private static final EntityRecord LONDON = surface("l1", "London", "london", EntityType.PLACE);

    private BlockingIndex index(MemoryTransaction tx) {
        return new BlockingIndex(tx, skipped::incrementAndGet);
    }

    @Test
    void aSurfaceIsFiledUnderEveryFormOfItsNameAndItsEmbeddingHashes() {
        assertThat(BlockingIndex.blockKeys(NAVY))
                .containsExactlyInAnyOrder(
                        "l:unitedstatesnavy",
                        "a:united states navy",
                        "a:usn",
                        "x:usn",
                        "t:united",
                        "t:states",
                        "t:navy",
                        "v0:1",
                        "v1:2",
                        "v2:3",
                        "v3:4");
        assertThat(BlockingIndex.blockKeys(USN)).containsExactlyInAnyOrder("l:usn", "a:usn", "x:usn", "t:usn");
    }

    @Test
    void candidatesAreTheSurfacesSharingABlockAndLeaveWithTheSurface() {
        MemoryTransaction tx = memory.begin();
        BlockingIndex index = index(tx);
        for (EntityRecord e : List.of(NAVY, USN, LONDON)) {
            assertThat(index.reindex(e.id(), null, e)).isEmpty();
        }

        assertThat(tx.index().get(Keys.of(NS, "t:navy", "n1"))).isEqualTo("united states navy");
        assertThat(index.members("x:usn", 10)).containsExactly("n1", "u1");
        assertThat(index.members("x:usn", 1)).containsExactly("n1");
        assertThat(index.candidates(USN)).containsExactly("n1", "u1");
        assertThat(index.candidates(LONDON)).containsExactly("l1");

        assertThat(index.reindex("n1", NAVY, null)).isEmpty();
        assertThat(index.members("x:usn", 10)).containsExactly("u1");
        assertThat(index.members("t:navy", 10)).isEmpty();
        assertThat(tx.index().get(Keys.of(NS, "t:navy", "n1"))).isNull();
        assertThat(memory.keys(StateStores.MEMORY_ENTITY_INDEX.name()))
                .as("staged, not stored")
                .isEmpty();
    }

    @Test
    void onlyTheKeysThatChangedAreRefiled() {
        MemoryTransaction tx = memory.begin();
        BlockingIndex index = index(tx);
        index.reindex("u1", null, USN);
        EntityRecord renamed = surface("u1", "USN", "usn", EntityType.ORGANIZATION, "us navy");

        index.reindex("u1", USN, renamed);

        assertThat(index.members("a:us navy", 10)).containsExactly("u1");
        assertThat(index.members("a:usn", 10)).containsExactly("u1");
        index.reindex("u1", renamed, USN);
        assertThat(index.members("a:us navy", 10)).isEmpty();
    }

    @Test
    void aBlockReadsTheStoredAndTheStagedSurfacesInIdOrder() {
        MemoryTransaction first = memory.begin();
        index(first).reindex("n1", null, NAVY);
        first.commit();

        MemoryTransaction tx = memory.begin();
        BlockingIndex index = index(tx);
        index.reindex("a0", null, surface("a0", "USN", "usn", EntityType.ORGANIZATION));
        index.reindex("z9", null, surface("z9", "USN", "usn", EntityType.ORGANIZATION));

        assertThat(index.members("x:usn", 10)).containsExactly("a0", "n1", "z9");
        assertThat(memory.keys(StateStores.MEMORY_ENTITY_INDEX.name())).hasSize(11);
    }

    @Test
    void aBlockOfMoreThanTheCapIsSkippedCountedAndReportedWhenItCrossesTheCap() {
        MemoryTransaction tx = memory.begin();
        BlockingIndex index = index(tx);
        List<String> crowd = new ArrayList<>();
        for (int i = 0; i < BlockingIndex.BLOCK_CAP; i++) {
            String id = "s" + (100 + i);
            crowd.add(id);
            tx.index().put(Keys.of(NS, "t:usn", id), "usn");
        }
        assertThat(index.block("t:usn")).hasSize(BlockingIndex.BLOCK_CAP);
        assertThat(skipped).hasValue(0);

        // The 65th surface: the block stops discriminating, and every surface in it must be decided again.
        assertThat(index.reindex("u1", null, USN))
                .hasSize(BlockingIndex.BLOCK_CAP + 1)
                .containsAll(crowd);
        assertThat(index.block("t:usn")).isEmpty();
        assertThat(skipped).hasValue(1);
        assertThat(index.candidates(USN)).as("the other blocks still count").containsExactly("u1");
        assertThat(skipped).hasValue(2);

        // It leaves again: the block discriminates again.
        assertThat(index.reindex("u1", USN, null))
                .hasSize(BlockingIndex.BLOCK_CAP)
                .containsAll(crowd);
        assertThat(index.block("t:usn")).hasSize(BlockingIndex.BLOCK_CAP);
    }

    @Test
    void hashesAreFixedBySeedAndNeedAVector() {
        float[] v = {0.1f, -0.2f, 0.3f};
        assertThat(BlockingIndex.Lsh.buckets(v)).hasSize(4).isEqualTo(BlockingIndex.Lsh.buckets(v.clone()));
        assertThat(BlockingIndex.Lsh.buckets(v)).allSatisfy(b -> assertThat(b).isBetween(0, 4095));
        assertThat(BlockingIndex.Lsh.buckets(null)).isEmpty();
        assertThat(BlockingIndex.Lsh.buckets(new float[0])).isEmpty();
    }
}
