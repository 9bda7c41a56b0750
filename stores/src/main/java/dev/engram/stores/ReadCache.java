package dev.engram.stores;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Decoded values of one store, by key, kept for the one thread that writes the store: the least recently read leave
 * first once {@code capacity} are held. Reading a value from a store decodes it from JSON every time; the memory step
 * reads the same few thousand entities for every record (the candidates of a name's blocks), so it reads them here.
 *
 * <p>The cache must see every write to its store: a {@link StagedStore} built over it writes through at commit, and
 * nothing else may write the store while the cache is in use. It holds no more than the store: when the store is
 * wiped or restored (a task that failed, a rebalance), the processor opens its stores again with new caches. Values
 * must be immutable.
 */
public final class ReadCache<V> {

    private final int capacity;
    private final Map<String, V> values;
    private long hits;
    private long misses;

    public ReadCache(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.capacity = capacity;
        this.values = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > ReadCache.this.capacity;
            }
        };
    }

    /** The value under {@code key}, read with {@code load} (null: there is none, which is not kept) on a miss. */
    public V get(String key, Function<String, V> load) {
        V v = values.get(Objects.requireNonNull(key, "key"));
        if (v != null) {
            hits++;
            return v;
        }
        misses++;
        v = load.apply(key);
        if (v != null) {
            values.put(key, v);
        }
        return v;
    }

    /** The store now holds {@code value} under {@code key} (null: nothing). */
    public void written(String key, V value) {
        if (value == null) {
            values.remove(key);
        } else {
            values.put(key, value);
        }
    }

    public int size() {
        return values.size();
    }

    public long hits() {
        return hits;
    }

    public long misses() {
        return misses;
    }
}
