package dev.engram.stores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.junit.jupiter.api.Test;

class StagedStoreTest {

    private final TreeMapStore<String> store = new TreeMapStore<>();
    private final StagedStore<String> staged = new StagedStore<>(store);

    private void stored(String... keysAndValues) {
        for (int i = 0; i < keysAndValues.length; i += 2) {
            store.put(keysAndValues[i], keysAndValues[i + 1]);
        }
    }

    private List<String> scan(String prefix) {
        List<String> out = new ArrayList<>();
        try (KeyValueIterator<String, String> it = staged.prefixScan(prefix)) {
            while (it.hasNext()) {
                String peeked = it.peekNextKey();
                KeyValue<String, String> kv = it.next();
                assertThat(kv.key).isEqualTo(peeked);
                out.add(kv.key + "=" + kv.value);
            }
        }
        return out;
    }

    @Test
    void readsSeeStagedWritesFirstAndDeletesHideStoredValues() {
        stored("a", "1", "b", "2");

        staged.put("a", "10");
        staged.put("c", "30");
        assertThat(staged.delete("b")).isEqualTo("2");

        assertThat(staged.get("a")).isEqualTo("10");
        assertThat(staged.get("b")).isNull();
        assertThat(staged.get("c")).isEqualTo("30");
        assertThat(staged.delete("c"))
                .as("the staged value is the previous one")
                .isEqualTo("30");
        assertThat(staged.get("c")).isNull();
        assertThat(staged.delete("never")).isNull();
        staged.put("b", "20");
        assertThat(staged.get("b")).isEqualTo("20");
        staged.put("a", null);
        assertThat(staged.get("a")).as("a null put deletes").isNull();
        assertThat(store.contents()).containsExactly(Map.entry("a", "1"), Map.entry("b", "2"));
    }

    @Test
    void aPrefixScanMergesStagedWritesWithTheStoreInKeyOrder() {
        stored("p\u0000a", "1", "p\u0000c", "3", "p\u0000e", "5", "p\u0000g", "7", "q\u0000a", "x", "p", "bare");

        staged.put("p\u0000b", "2"); // between stored keys
        staged.put("p\u0000c", "33"); // replaces a stored value
        staged.delete("p\u0000e"); // hides a stored key
        staged.delete("p\u0000f"); // deletes what was never stored
        staged.put("p\u0000h", "8"); // after every stored key
        staged.put("p\u0000", "0"); // the prefix itself
        staged.put("q\u0000b", "y"); // another prefix

        assertThat(scan("p\u0000"))
                .containsExactly("p\u0000=0", "p\u0000a=1", "p\u0000b=2", "p\u0000c=33", "p\u0000g=7", "p\u0000h=8");
        assertThat(scan("q\u0000")).containsExactly("q\u0000a=x", "q\u0000b=y");
        assertThat(scan("r\u0000")).isEmpty();
        assertThat(store.openIterators()).as("the store's iterators are closed").isZero();
    }

    @Test
    void aScanWhoseStoredKeysAreAllDeletedIsEmpty() {
        stored("p\u0000a", "1", "p\u0000b", "2");
        staged.delete("p\u0000a");
        staged.delete("p\u0000b");

        assertThat(scan("p\u0000")).isEmpty();
    }

    @Test
    void keysAreOrderedAsTheStoreOrdersThemByUtf8Bytes() {
        String supplementary = "p\u0000\uD83D\uDE00"; // U+1F600: four UTF-8 bytes starting 0xF0
        String privateUse = "p\u0000\uE000"; // U+E000: three UTF-8 bytes starting 0xEE, before U+1F600
        String ascii = "p\u0000z";
        stored(supplementary, "s");
        staged.put(privateUse, "e");
        staged.put(ascii, "a");

        assertThat(scan("p\u0000")).containsExactly(ascii + "=a", privateUse + "=e", supplementary + "=s");
        staged.commit();
        List<String> storeOrder = new ArrayList<>();
        store.contents().forEach((k, v) -> storeOrder.add(k + "=" + v));
        assertThat(storeOrder).containsExactly(ascii + "=a", privateUse + "=e", supplementary + "=s");
        assertThat(StagedStore.compareKeys(privateUse, supplementary)).isNegative();
        assertThat(StagedStore.compareKeys("ab", "a")).isPositive();
    }

    @Test
    void aScanSeesOnlyTheWritesStagedBeforeItStarted() {
        stored("p\u0000a", "1");
        staged.put("p\u0000b", "2");
        List<String> seen = new ArrayList<>();
        try (KeyValueIterator<String, String> it = staged.prefixScan("p\u0000")) {
            staged.put("p\u0000c", "3");
            it.forEachRemaining(kv -> seen.add(kv.key));
        }
        assertThat(seen).containsExactly("p\u0000a", "p\u0000b");
    }

    @Test
    void nothingReachesTheStoreBeforeCommit() {
        stored("a", "1", "b", "2");
        int before = store.writes();

        staged.put("a", "10");
        staged.delete("b");
        staged.put("c", "3");
        assertThat(store.writes()).isEqualTo(before);
        assertThat(staged.isEmpty()).isFalse();

        staged.commit();

        assertThat(store.contents()).containsExactly(Map.entry("a", "10"), Map.entry("c", "3"));
        assertThat(staged.isEmpty()).isTrue();
        assertThat(staged.get("b")).isNull();
    }

    @Test
    void abortLeavesTheStoreAsItWas() {
        stored("a", "1", "b", "2");
        Map<String, String> before = new TreeMap<>(store.contents());
        int writes = store.writes();

        staged.put("a", "10");
        staged.delete("b");
        staged.put("c", "3");
        staged.abort();

        assertThat(store.contents()).isEqualTo(before);
        assertThat(store.writes()).isEqualTo(writes);
        assertThat(staged.isEmpty()).isTrue();
        assertThat(staged.get("a")).isEqualTo("1");
        assertThat(staged.get("b")).isEqualTo("2");
        assertThat(scan("")).containsExactly("a=1", "b=2");
    }

    @Test
    void aStoredKeyDeletedThenPutAgainIsScannedOnceWithItsNewValue() {
        stored("p\u0000a", "1", "p\u0000b", "2", "p\u0000c", "3");

        staged.delete("p\u0000b");
        staged.put("p\u0000b", "22");
        staged.deletePrefix("p\u0000c");

        assertThat(scan("p\u0000")).containsExactly("p\u0000a=1", "p\u0000b=22");
        staged.deletePrefix("p\u0000");
        assertThat(scan("p\u0000")).isEmpty();
        assertThat(store.contents()).hasSize(3);
    }

    @Test
    void writesAfterTheTransactionEndedAreRefused() {
        staged.put("a", "1");
        staged.commit();

        assertThatThrownBy(() -> staged.put("b", "2")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> staged.delete("a")).isInstanceOf(IllegalStateException.class);
        assertThat(store.contents()).containsExactly(Map.entry("a", "1"));
    }

    @Test
    void aReadCacheServesDecodedValuesAndSeesEveryCommittedWriteButNoAbortedOne() {
        stored("a", "1", "b", "2");
        ReadCache<String> cache = new ReadCache<>(10);
        StagedStore<String> first = new StagedStore<>(store, cache);
        assertThat(first.get("a")).isEqualTo("1");
        assertThat(first.get("a")).isEqualTo("1");
        assertThat(first.get("missing")).isNull();
        assertThat(cache.hits()).isEqualTo(1);
        assertThat(cache.size()).isEqualTo(1); // an absent key is not kept: it may be written by the next record

        first.put("a", "10");
        first.delete("b");
        first.put("c", "3");
        assertThat(first.get("a")).isEqualTo("10"); // staged first
        first.commit();
        StagedStore<String> second = new StagedStore<>(store, cache);
        assertThat(second.get("a")).isEqualTo("10");
        assertThat(second.get("b")).isNull();
        assertThat(second.get("c")).isEqualTo("3");

        second.put("a", "staged then aborted");
        second.delete("c");
        second.abort();
        StagedStore<String> third = new StagedStore<>(store, cache);
        assertThat(third.get("a")).isEqualTo("10");
        assertThat(third.get("c")).isEqualTo("3");
        assertThat(store.get("a")).isEqualTo("10");
    }

    @Test
    void aReadCacheKeepsAtMostItsCapacityDroppingTheLeastRecentlyRead() {
        stored("a", "1", "b", "2", "c", "3");
        ReadCache<String> cache = new ReadCache<>(2);
        StagedStore<String> s = new StagedStore<>(store, cache);
        s.get("a");
        s.get("b");
        s.get("a"); // b is now the least recently read
        s.get("c");
        assertThat(cache.size()).isEqualTo(2);
        long misses = cache.misses();
        assertThat(s.get("a")).isEqualTo("1");
        assertThat(cache.misses()).isEqualTo(misses);
        assertThat(s.get("b")).isEqualTo("2");
        assertThat(cache.misses()).isEqualTo(misses + 1);
        assertThatThrownBy(() -> new ReadCache<String>(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
