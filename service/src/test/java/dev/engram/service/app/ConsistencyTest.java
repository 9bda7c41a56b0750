package dev.engram.service.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.metrics.Meters;
import dev.engram.schemas.MirrorDigest;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.schemas.MirrorRecord.VectorKind;
import dev.engram.service.http.ApiException;
import dev.engram.sinks.VectorMirror;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.MirrorEntry;
import dev.engram.stores.MirrorIds;
import dev.engram.stores.NamespaceState;
import dev.engram.stores.StateStores;
import dev.engram.stores.StoreSpec;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The consistency check's bounds, against memory stores in memory and a vector mirror stand-in that records what it
 * was asked: a large namespace is compared on a random sample of buckets (never scrolled whole) with a stated bound
 * on its drift rate, a full check compares everything, and one check runs at a time.
 */
class ConsistencyTest {

    private static final String NS = "big";
    private static final int OBJECTS = 25_000;

    private final MockProcessorContext<Void, Void> context = new MockProcessorContext<>();
    private final Map<String, KeyValueStore<String, ?>> stores = new HashMap<>();
    private final Mirror mirror = new Mirror();

    /** A vector mirror holding every passage's vector but every hundredth's, which is missing. */
    private static final class Mirror implements VectorMirror {
        final Map<String, Long> held = new HashMap<>();
        final List<Object> asked = new ArrayList<>();
        volatile CountDownLatch hold;
        final CountDownLatch entered = new CountDownLatch(1);

        @Override
        public Map<MirrorRecord, String> apply(List<MirrorRecord> records) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void undo(Collection<MirrorRecord> records) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<String> points(MirrorRecord record) {
            return List.of();
        }

        @Override
        public Map<VectorKind, Map<String, Long>> versions(String namespace) {
            asked.add("all");
            return shaped(held);
        }

        @Override
        public Map<VectorKind, Map<String, Long>> versions(String namespace, Set<Integer> buckets) {
            asked.add(Set.copyOf(buckets));
            entered.countDown();
            if (hold != null) {
                try {
                    hold.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            Map<String, Long> inBuckets = new HashMap<>();
            held.forEach((id, v) -> {
                if (buckets.contains(MirrorDigest.bucket(id))) {
                    inBuckets.put(id, v);
                }
            });
            return shaped(inBuckets);
        }

        private static Map<VectorKind, Map<String, Long>> shaped(Map<String, Long> passages) {
            Map<VectorKind, Map<String, Long>> out = new EnumMap<>(VectorKind.class);
            for (VectorKind vk : VectorKind.values()) {
                out.put(vk, vk.owner() == Kind.PASSAGE && vk.bit() == 1 ? Map.copyOf(passages) : Map.of());
            }
            return out;
        }

        @Override
        public void close() {}
    }

    ConsistencyTest() {
        KeyValueStore<String, NamespaceState> namespaces = store(StateStores.MEMORY_NAMESPACES);
        namespaces.put(NS, new NamespaceState(NS, 1, 1, OBJECTS, 0, 0, 0, Map.of(), 0, 0, Instant.EPOCH));
        KeyValueStore<String, MirrorEntry> entries = store(StateStores.MEMORY_MIRROR);
        for (int i = 0; i < OBJECTS; i++) {
            String id = String.format("%032x", i * 2_654_435_761L);
            entries.put(MirrorIds.key(NS, Kind.PASSAGE, id), MirrorEntry.at(3, 1, Instant.EPOCH));
            if (i % 100 != 0) {
                mirror.held.put(id, 3L);
            }
        }
    }

    private <V> KeyValueStore<String, V> store(StoreSpec<V> spec) {
        KeyValueStore<String, V> store = Stores.keyValueStoreBuilder(
                        Stores.inMemoryKeyValueStore(spec.name()), StoreSpec.KEY, spec.values())
                .withLoggingDisabled()
                .build();
        store.init(context.getStateStoreContext(), store);
        stores.put(spec.name(), store);
        return store;
    }

    private Consistency consistency() {
        MemoryReader memory = new MemoryReader(name -> stores.get(name));
        return new Consistency(ns -> memory, null, mirror, null, "c", Meters.detached(), Clock.systemUTC(), null);
    }

    @Test
    void aLargeNamespaceIsComparedOnASampleOfBucketsWithABoundOnItsDrift() {
        Consistency.Report report = consistency().check(NS, Consistency.Scope.BOUNDED);

        assertThat(report.sampled()).isTrue();
        assertThat(mirror.asked)
                .as("the mirror is asked for the sampled buckets only")
                .hasSize(1);
        assertThat(mirror.asked.get(0)).isInstanceOf(Set.class);
        Consistency.Sample sample = report.sample();
        assertThat(sample.buckets()).isEqualTo(26).isEqualTo(((Set<?>) mirror.asked.get(0)).size());
        assertThat(sample.total()).isEqualTo(OBJECTS);
        assertThat(sample.objects()).isBetween(7_000L, 13_000L);
        // 1 % of the objects drift: the estimate lands near 250 and the bound holds the true rate
        assertThat(sample.estimatedDrifting()).isBetween(150L, 350L);
        assertThat(sample.driftRateUpper95()).isGreaterThan(0.01).isLessThan(0.02);
        assertThat(report.consistent()).isFalse();
    }

    @Test
    void aFullCheckComparesEveryObject() {
        Consistency.Report report = consistency().check(NS, Consistency.Scope.FULL);

        assertThat(report.sampled()).isFalse();
        assertThat(report.sample()).isNull();
        assertThat(mirror.asked).containsExactly("all");
        assertThat(report.drifting()).isEqualTo(OBJECTS / 100);
    }

    @Test
    void aSampleWithoutDriftBoundsItsRateByTheRuleOfThree() {
        Consistency.Sample sample = Consistency.sample(16, 6_000, 24_000, 0);
        assertThat(sample.driftRateUpper95()).isEqualTo(3.0 / 6_000);
        assertThat(sample.estimatedDrifting()).isZero();
        assertThat(Consistency.sample(16, 0, 0, 0).driftRateUpper95()).isEqualTo(1.0);
    }

    @Test
    void oneCheckRunsAtATimeAndAnotherIsToldToComeBack() throws Exception {
        Consistency consistency = consistency();
        mirror.hold = new CountDownLatch(1);
        CompletableFuture<Consistency.Report> first =
                CompletableFuture.supplyAsync(() -> consistency.check(NS, Consistency.Scope.BOUNDED));
        assertThat(mirror.entered.await(10, TimeUnit.SECONDS)).isTrue();

        assertThatThrownBy(() -> consistency.check(NS, Consistency.Scope.BOUNDED))
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.status()).isEqualTo(429);
                    assertThat(e.retryAfterSeconds()).isEqualTo(5);
                });
        mirror.hold.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS).sampled()).isTrue();
        assertThat(consistency.check(NS, Consistency.Scope.FULL).sampled()).isFalse();
    }
}
