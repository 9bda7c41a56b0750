package dev.engram.stores;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/** A key-value store in a sorted map, ordered by UTF-8 key bytes as RocksDB orders them; counts its writes. */
final class TreeMapStore<V> implements KeyValueStore<String, V> {

    private final NavigableMap<String, V> map = new TreeMap<>(
            (a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8)));
    private int writes;
    private int openIterators;

    int writes() {
        return writes;
    }

    int openIterators() {
        return openIterators;
    }

    Map<String, V> contents() {
        return new TreeMap<>(map);
    }

    @Override
    public void put(String key, V value) {
        writes++;
        if (value == null) {
            map.remove(key);
        } else {
            map.put(key, value);
        }
    }

    @Override
    public V putIfAbsent(String key, V value) {
        V old = map.get(key);
        if (old == null) {
            put(key, value);
        }
        return old;
    }

    @Override
    public void putAll(List<KeyValue<String, V>> entries) {
        entries.forEach(kv -> put(kv.key, kv.value));
    }

    @Override
    public V delete(String key) {
        writes++;
        return map.remove(key);
    }

    @Override
    public V get(String key) {
        return map.get(key);
    }

    @Override
    public KeyValueIterator<String, V> range(String from, String to) {
        return iterator(new ArrayList<>(map.subMap(from, true, to, true).entrySet()));
    }

    @Override
    public KeyValueIterator<String, V> all() {
        return iterator(new ArrayList<>(map.entrySet()));
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<String, V> prefixScan(P prefix, PS serializer) {
        String p = (String) prefix;
        List<Map.Entry<String, V>> out = new ArrayList<>();
        for (Map.Entry<String, V> e : map.tailMap(p, true).entrySet()) {
            if (!e.getKey().startsWith(p)) {
                break;
            }
            out.add(Map.entry(e.getKey(), e.getValue()));
        }
        return iterator(out);
    }

    private KeyValueIterator<String, V> iterator(List<Map.Entry<String, V>> entries) {
        openIterators++;
        Iterator<Map.Entry<String, V>> it = entries.iterator();
        return new KeyValueIterator<>() {
            private int i;

            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public KeyValue<String, V> next() {
                i++;
                Map.Entry<String, V> e = it.next();
                return KeyValue.pair(e.getKey(), e.getValue());
            }

            @Override
            public String peekNextKey() {
                return entries.get(i).getKey();
            }

            @Override
            public void close() {
                openIterators--;
            }
        };
    }

    @Override
    public long approximateNumEntries() {
        return map.size();
    }

    @Override
    public String name() {
        return "tree-map";
    }

    @Override
    public void init(StateStoreContext context, StateStore root) {}

    @Override
    public void close() {}

    @Override
    public boolean persistent() {
        return false;
    }

    @Override
    public boolean isOpen() {
        return true;
    }
}
