package dev.engram.processors;

import static dev.engram.processors.MemoryFixture.NS;
import static dev.engram.processors.MemoryFixture.surface;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.MemoryChange;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MemoryLogEntry;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.StateStores;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.junit.jupiter.api.Test;

class MemoryTransactionTest {

    private final MemoryFixture memory = new MemoryFixture();

    private static void write(MemoryTransaction tx, String id) {
        tx.entities().put(Keys.of(NS, id), surface(id, id, id, EntityType.PERSON));
        tx.index().put(Keys.of(NS, "a:" + id, id), id);
        tx.entityVectors().put(Keys.of(NS, id), new byte[] {1, 2, 3, 4});
        tx.counts(0, 0, 1, 1);
        tx.change(new MemoryChange.EntityCreated(NS, tx.nextVersion(), tx.now(), id, id, EntityType.PERSON));
    }

    @Test
    void writesCountersAndChangesReachTheStoresOnlyOnCommit() {
        MemoryTransaction tx = memory.begin();
        write(tx, "a1");
        write(tx, "b2");

        assertThat(memory.contents())
                .allSatisfy((store, entries) -> assertThat(entries).as(store).isEmpty());
        assertThat(tx.entities().get(Keys.of(NS, "a1")))
                .as("reads see the staged writes")
                .isNotNull();

        List<MemoryChange> changes = tx.commit();

        assertThat(changes).extracting(MemoryChange::version).containsExactly(1L, 2L);
        Map<String, Map<String, String>> stored = memory.contents();
        assertThat(stored.get(StateStores.MEMORY_ENTITIES.name()))
                .containsOnlyKeys(Keys.of(NS, "a1"), Keys.of(NS, "b2"));
        assertThat(stored.get(StateStores.MEMORY_ENTITY_INDEX.name())).hasSize(2);
        assertThat(stored.get(StateStores.MEMORY_ENTITY_VECTORS.name())).hasSize(2);
        NamespaceState state = memory.stores.namespaces().get(NS);
        assertThat(state.version()).isEqualTo(2);
        assertThat(state.entities()).isEqualTo(2);
        assertThat(state.surfaces()).isEqualTo(2);
        assertThatThrownBy(() -> tx.change(changes.get(0))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theDocumentIsWrittenAfterTheGraphAndTheNamespaceStateItImplies() {
        // queries read the stores while the memory step writes them: whoever sees a document's new status must find
        // the entities of its passages, and the query snapshot must not take a version before its graph is written
        List<String> writes = new ArrayList<>();
        MemoryFixture noted = new MemoryFixture(writes);
        MemoryTransaction tx = noted.begin();
        tx.documents()
                .put(
                        Keys.of(NS, "doc"),
                        new DocumentRecord(
                                NS,
                                "doc",
                                1,
                                DocumentStatus.VERIFIED,
                                "T",
                                "src",
                                Map.of(),
                                null,
                                List.of(),
                                1,
                                MemoryFixture.NOW,
                                null,
                                List.of()));
        write(tx, "a1");
        tx.commit();

        assertThat(writes)
                .contains(StateStores.MEMORY_ENTITIES.name(), StateStores.MEMORY_ENTITY_INDEX.name())
                .endsWith(
                        StateStores.MEMORY_LOG.name(),
                        StateStores.MEMORY_NAMESPACES.name(),
                        StateStores.MEMORY_DOCUMENTS.name())
                .containsOnlyOnce(StateStores.MEMORY_DOCUMENTS.name());
    }

    @Test
    void abortLeavesTheStoresTheCountersAndTheVersionsAsTheyWere() {
        MemoryTransaction first = memory.begin();
        write(first, "a1");
        first.commit();
        Map<String, Map<String, String>> before = memory.contents();

        MemoryTransaction tx = memory.begin();
        write(tx, "b2");
        tx.entities().delete(Keys.of(NS, "a1"));
        tx.index().delete(Keys.of(NS, "a:a1", "a1"));
        tx.update(s -> s.themeChanges(false, 5));
        assertThat(tx.changes()).hasSize(1);
        tx.abort();

        assertThat(memory.contents()).isEqualTo(before);
        assertThat(tx.changes()).isEmpty();
        MemoryTransaction next = memory.begin();
        assertThat(next.state()).isEqualTo(memory.stores.namespaces().get(NS));
        assertThat(next.nextVersion()).as("the aborted version is given again").isEqualTo(2);
        assertThat(next.entities().get(Keys.of(NS, "a1"))).isNotNull();
        assertThat(next.entities().get(Keys.of(NS, "b2"))).isNull();
    }

    /**
     * Each transaction that moves the namespace's version leaves an entry under the new version, naming what it
     * changed and chained to the version before; one that moves nothing leaves none, and entries more than {@link
     * MemoryLogEntry#KEPT_VERSIONS} versions old leave.
     */
    @Test
    void theLogNamesWhatEachTransactionChangedChainedByVersion() {
        MemoryTransaction first = memory.begin();
        write(first, "a1");
        first.passageChanged("p1");
        first.surfaceChanged("a1");
        first.commit();
        MemoryTransaction quiet = memory.begin();
        quiet.update(s -> s.themeChanges(false, 1));
        quiet.commit();
        MemoryTransaction second = memory.begin();
        write(second, "b2");
        write(second, "c3");
        second.surfaceChanged("b2");
        second.commit();

        assertThat(log())
                .containsExactly(
                        Map.entry(1L, MemoryLogEntry.of(0, List.of("p1"), List.of("a1"))),
                        Map.entry(3L, MemoryLogEntry.of(1, List.of(), List.of("b2"))));

        MemoryTransaction aborted = memory.begin();
        write(aborted, "d4");
        aborted.passageChanged("p2");
        aborted.abort();
        assertThat(log()).hasSize(2);

        MemoryTransaction far = memory.begin();
        for (long i = 0; i < MemoryLogEntry.KEPT_VERSIONS; i++) {
            far.nextVersion();
        }
        far.commit();
        assertThat(log())
                .as("version 1 is now too old, version 3 is not")
                .containsOnlyKeys(3L, 3 + MemoryLogEntry.KEPT_VERSIONS);
        MemoryTransaction next = memory.begin();
        write(next, "e5");
        next.commit();
        assertThat(log())
                .as("version 3 now is")
                .containsOnlyKeys(3 + MemoryLogEntry.KEPT_VERSIONS, 4 + MemoryLogEntry.KEPT_VERSIONS);

        MemoryTransaction huge = memory.begin();
        huge.nextVersion();
        for (int i = 0; i <= MemoryLogEntry.MAX_IDS; i++) {
            huge.passageChanged(String.format("p%05d", i));
        }
        huge.commit();
        assertThat(log().get(5 + MemoryLogEntry.KEPT_VERSIONS))
                .as("too much to list: a whole change, as small as any entry")
                .isEqualTo(new MemoryLogEntry(4 + MemoryLogEntry.KEPT_VERSIONS, List.of(), List.of(), true));
    }

    private Map<Long, MemoryLogEntry> log() {
        Map<Long, MemoryLogEntry> out = new TreeMap<>();
        try (KeyValueIterator<String, MemoryLogEntry> it = memory.stores.log().all()) {
            it.forEachRemaining(kv -> out.put(MemoryLogEntry.version(kv.key), kv.value));
        }
        return out;
    }

    @Test
    void aNewNamespaceStartsEmpty() {
        MemoryTransaction tx = memory.begin();
        assertThat(tx.namespace()).isEqualTo(NS);
        assertThat(tx.state()).isEqualTo(NamespaceState.empty(NS));
        assertThat(tx.now()).isEqualTo(MemoryFixture.NOW);
        assertThat(tx.commit()).isEmpty();
        assertThat(memory.stores.namespaces().get(NS)).isEqualTo(NamespaceState.empty(NS));
    }
}
