package dev.engram.stores;

import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Staged writes over one store, for the length of a transaction: puts and deletes go to an overlay that reads see
 * first (a delete hides the stored value), prefix scans merge the overlay with the store in key order, and nothing
 * reaches the store until {@link #commit()}; {@link #abort()} forgets what was staged.
 *
 * <p>The part of {@link KeyValueStore} that the memory step uses, with the same meaning. Keys are ordered as the
 * stores order them: by their UTF-8 bytes, which is the order of their code points.
 */
public final class StagedStore<V> {

    private static final StringSerializer KEYS = new StringSerializer();

    private final KeyValueStore<String, V> store;
    /** Decoded values of the store, written through at commit; null: every read goes to the store. */
    private final ReadCache<V> cache;
    /** Staged writes by key; a null value is a staged delete. */
    private final NavigableMap<String, V> staged = new TreeMap<>(StagedStore::compareKeys);

    private boolean open = true;

    public StagedStore(KeyValueStore<String, V> store) {
        this(store, null);
    }

    /** Staged writes over {@code store}, reading through {@code cache} (which must see every write to the store). */
    public StagedStore(KeyValueStore<String, V> store, ReadCache<V> cache) {
        this.store = Objects.requireNonNull(store, "store");
        this.cache = cache;
    }

    /** The value under {@code key}: the staged one if any, else the stored one; null when there is none. */
    public V get(String key) {
        Objects.requireNonNull(key, "key");
        return staged.containsKey(key) ? staged.get(key) : stored(key);
    }

    /** Stages {@code value} under {@code key}; a null value deletes, as in {@link KeyValueStore#put}. */
    public void put(String key, V value) {
        checkOpen();
        staged.put(Objects.requireNonNull(key, "key"), value);
    }

    /** Stages the deletion of {@code key}; returns the value it had (staged or stored), or null. */
    public V delete(String key) {
        checkOpen();
        V previous = get(key);
        staged.put(key, null);
        return previous;
    }

    /** Stages the deletion of every key starting with {@code prefix}. */
    public void deletePrefix(String prefix) {
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, V> it = prefixScan(prefix)) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        keys.forEach(this::delete);
    }

    /**
     * Every key starting with {@code prefix} with its value, in key order: the stored entries with the staged writes
     * applied. The staged writes are those made before the call; the iterator must be closed.
     */
    public KeyValueIterator<String, V> prefixScan(String prefix) {
        List<Map.Entry<String, V>> overlay = new ArrayList<>();
        for (Map.Entry<String, V> e : staged.tailMap(prefix, true).entrySet()) {
            if (!e.getKey().startsWith(prefix)) {
                break;
            }
            overlay.add(new SimpleImmutableEntry<>(e.getKey(), e.getValue()));
        }
        KeyValueIterator<String, V> stored = store.prefixScan(prefix, KEYS);
        return overlay.isEmpty() ? stored : new Merged<>(stored, overlay);
    }

    /** The keys written (put or deleted) so far, in key order. */
    public List<String> stagedKeys() {
        return List.copyOf(staged.keySet());
    }

    /** The value under {@code key} in the store, as it was before this transaction's writes; null when none. */
    public V stored(String key) {
        Objects.requireNonNull(key, "key");
        return cache == null ? store.get(key) : cache.get(key, store::get);
    }

    /** True when nothing is staged. */
    public boolean isEmpty() {
        return staged.isEmpty();
    }

    /** Writes what was staged to the store, in key order; the staged store is done. */
    public void commit() {
        checkOpen();
        open = false;
        for (Map.Entry<String, V> e : staged.entrySet()) {
            if (e.getValue() == null) {
                store.delete(e.getKey());
            } else {
                store.put(e.getKey(), e.getValue());
            }
            if (cache != null) {
                cache.written(e.getKey(), e.getValue());
            }
        }
        staged.clear();
    }

    /** Forgets what was staged; the store stays as it was, and the staged store is done. */
    public void abort() {
        open = false;
        staged.clear();
    }

    /** A write after commit or abort would be lost: it is a bug, said at once. */
    private void checkOpen() {
        if (!open) {
            throw new IllegalStateException("staged writes after the transaction ended");
        }
    }

    /**
     * Code point order, which is the order of the keys' UTF-8 bytes (the stores' order): UTF-16 order except that
     * surrogates (code points above U+FFFF) sort after every other char.
     */
    static int compareKeys(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            char x = a.charAt(i);
            char y = b.charAt(i);
            if (x != y) {
                boolean sx = Character.isSurrogate(x);
                boolean sy = Character.isSurrogate(y);
                if (sx != sy) {
                    return sx ? 1 : -1;
                }
                return Character.compare(x, y);
            }
        }
        return Integer.compare(a.length(), b.length());
    }

    /** The stored entries of a prefix with the staged writes applied: a merge of two sorted sequences. */
    private static final class Merged<V> implements KeyValueIterator<String, V> {
        private final KeyValueIterator<String, V> stored;
        private final List<Map.Entry<String, V>> overlay;
        private int o;
        private KeyValue<String, V> storedNext;
        private KeyValue<String, V> next;

        Merged(KeyValueIterator<String, V> stored, List<Map.Entry<String, V>> overlay) {
            this.stored = stored;
            this.overlay = overlay;
            try {
                this.storedNext = stored.hasNext() ? stored.next() : null;
                advance();
            } catch (RuntimeException e) {
                stored.close();
                throw e;
            }
        }

        private void advance() {
            next = null;
            while (next == null && (storedNext != null || o < overlay.size())) {
                Map.Entry<String, V> w = o < overlay.size() ? overlay.get(o) : null;
                int c = w == null ? -1 : storedNext == null ? 1 : compareKeys(storedNext.key, w.getKey());
                if (c < 0) {
                    next = storedNext;
                    storedNext = stored.hasNext() ? stored.next() : null;
                    continue;
                }
                if (c == 0) {
                    storedNext = stored.hasNext() ? stored.next() : null; // the staged write replaces it
                }
                o++;
                if (w.getValue() != null) {
                    next = KeyValue.pair(w.getKey(), w.getValue());
                }
            }
        }

        @Override
        public boolean hasNext() {
            return next != null;
        }

        @Override
        public KeyValue<String, V> next() {
            if (next == null) {
                throw new NoSuchElementException();
            }
            KeyValue<String, V> out = next;
            advance();
            return out;
        }

        @Override
        public String peekNextKey() {
            if (next == null) {
                throw new NoSuchElementException();
            }
            return next.key;
        }

        @Override
        public void close() {
            stored.close();
        }
    }
}
