package dev.engram.processors;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Json;
import dev.engram.schemas.Span;
import dev.engram.stores.EntityRecord;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoreSpec;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/** The memory step's stores in memory, with transactions over them and hand-built extractions, for unit tests. */
final class MemoryFixture {

    static final String NS = "wiki";
    static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

    private final MockProcessorContext<Void, Emission> context = new MockProcessorContext<>();
    final MemoryStores stores;

    MemoryFixture() {
        this(null);
    }

    /** Stores that also note, in {@code writes}, the name of the store each write goes to (null: not noted). */
    MemoryFixture(List<String> writes) {
        for (StoreSpec<?> spec : StateStores.MEMORY) {
            KeyValueStore<String, ?> store = Stores.keyValueStoreBuilder(
                            Stores.inMemoryKeyValueStore(spec.name()), StoreSpec.KEY, spec.values())
                    .withLoggingDisabled()
                    .build();
            store.init(context.getStateStoreContext(), store);
            context.addStateStore(writes == null ? store : noting(store, writes));
        }
        stores = MemoryStores.open(context);
    }

    private static KeyValueStore<?, ?> noting(KeyValueStore<String, ?> store, List<String> writes) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (Set.of("put", "putAll", "putIfAbsent", "delete").contains(method.getName())) {
                writes.add(store.name());
            }
            try {
                return method.invoke(store, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (KeyValueStore<?, ?>) Proxy.newProxyInstance(
                MemoryFixture.class.getClassLoader(), new Class<?>[] {KeyValueStore.class}, handler);
    }

    /** A transaction over the namespace {@link #NS}, at {@link #NOW}. */
    MemoryTransaction begin() {
        return MemoryTransaction.open(stores, NS, () -> NOW);
    }

    /** Every entry of every memory store, values as JSON (bytes as base64), by store and key. */
    Map<String, Map<String, String>> contents() {
        return contents(context::getStateStore);
    }

    /** Every entry of every memory store the function opens, values as JSON (bytes as base64), by store and key. */
    static Map<String, Map<String, String>> contents(Function<String, KeyValueStore<String, Object>> stores) {
        Map<String, Map<String, String>> out = new TreeMap<>();
        for (StoreSpec<?> spec : StateStores.MEMORY) {
            KeyValueStore<String, Object> store = stores.apply(spec.name());
            Map<String, String> entries = new TreeMap<>();
            try (KeyValueIterator<String, Object> it = store.all()) {
                it.forEachRemaining(kv -> entries.put(
                        kv.key,
                        kv.value instanceof byte[] b
                                ? Base64.getEncoder().encodeToString(b)
                                : Json.toString(kv.value)));
            }
            out.put(spec.name(), entries);
        }
        return out;
    }

    /** The keys of a store, in order. */
    List<String> keys(String store) {
        List<String> out = new ArrayList<>();
        KeyValueStore<String, Object> kv = context.getStateStore(store);
        try (KeyValueIterator<String, Object> it = kv.all()) {
            it.forEachRemaining(e -> out.add(e.key));
        }
        return out;
    }

    // ---- hand-built extractions ----------------------------------------------------------------------------------

    static Extraction.Entity entity(String name, EntityType type, String description, String... aliases) {
        return new Extraction.Entity(name, type, description, List.of(aliases), List.of(new Span(0, name.length())));
    }

    static Extraction extraction(Extraction.Entity... entities) {
        return new Extraction(
                "memory",
                List.of(entities),
                List.of(),
                List.of(),
                List.of(),
                "hand/1",
                null,
                Extraction.TokenUsage.NONE);
    }

    /** A surface entity as resolution stores it, with no vector and no aliases unless given. */
    static EntityRecord surface(String id, String name, String normalized, EntityType type, String... aliases) {
        Map<String, Integer> counted = new TreeMap<>();
        for (String a : aliases) {
            counted.put(a, 1);
        }
        return new EntityRecord(NS, id, name, normalized, type, 1, 1, Map.of(name, 1), counted, "", "p", List.of(), id);
    }
}
