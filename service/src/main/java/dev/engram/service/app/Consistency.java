package dev.engram.service.app;

import dev.engram.metrics.Meters;
import dev.engram.query.QueryException;
import dev.engram.schemas.Compensation;
import dev.engram.schemas.Json;
import dev.engram.schemas.MirrorDigest;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.schemas.MirrorRecord.VectorKind;
import dev.engram.service.http.ApiException;
import dev.engram.sinks.Digests;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.sinks.VectorMirror;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.MirrorEntry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The consistency contract: compares a namespace's objects in memory (the authority) with Neo4j and Qdrant by (id,
 * version). Neo4j is compared per bucket of digests first (only differing buckets are listed id by id); Qdrant, which
 * cannot sum in a query, is scrolled for (id, version) payloads. Objects a mirror rejected (compensated) are expected
 * to be absent and counted apart. Repair sends each drifting object to the memory step as a {@code drifted} report,
 * which re-emits its state — or a delete for an orphan — through the mirror topic, in order with everything else.
 *
 * <p>The work is bounded: a namespace of more than {@link #SAMPLE_OBJECTS} objects is compared on a random sample of
 * its digest buckets (every object of a bucket, so a uniform sample of the objects by the hash of their ids), with
 * the drift rate it bounds at 95 % confidence; only a full check ({@link Scope#FULL}, for administrators) compares
 * everything. One check runs at a time per instance: each reads the shared stores.
 */
public final class Consistency {

    /** Ids listed per finding; the counts are always whole. */
    static final int LISTED = 100;

    /** Objects (of every kind) a sampled check compares, about. */
    static final int SAMPLE_OBJECTS = 10_000;

    /** How much of the namespace a check compares. */
    public enum Scope {
        /** Everything, whatever the size (administrators). */
        FULL,
        /** Everything up to {@link #SAMPLE_OBJECTS} objects, a random sample of the digest buckets beyond. */
        BOUNDED
    }

    /**
     * What a sampled check compared: {@code buckets} of the {@code of} digest buckets, holding {@code objects} of the
     * namespace's {@code total} objects in memory; {@code driftRateUpper95} bounds the share of drifting objects at 95
     * % confidence, and {@code estimatedDrifting} scales the drift found to the whole namespace.
     */
    record Sample(int buckets, int of, long objects, long total, double driftRateUpper95, long estimatedDrifting) {}

    /** One kind of object in one mirror. */
    record Check(
            String kind,
            String mirror,
            long memory,
            long mirrored,
            long compensated,
            long missingCount,
            long staleCount,
            long orphanedCount,
            long inFlight,
            List<String> missing,
            List<String> stale,
            List<String> orphaned) {}

    /**
     * The whole comparison of a namespace: consistent when no object drifts, none is in flight and no mirror holds an
     * object it rejected (a rejected object is stale or absent in the mirror that refused it until the repair loop
     * writes it). The mirrors are read once the sink has applied every record memory had written when the check read
     * it ({@code position}, null without a sink group to ask); a difference is {@code inFlight} rather than drift when
     * the sink had not caught up by then, or when the object changed in memory around the check.
     */
    public record Report(
            String namespace,
            boolean consistent,
            long drifting,
            long rejected,
            long inFlight,
            SinkPosition.At position,
            boolean sampled,
            Sample sample,
            List<Check> checks) {}

    /** What a repair sent to the memory step. */
    record Repair(String namespace, long sent, Report before) {}

    private final Function<String, MemoryReader> memories;
    private final Neo4jMirror graph;
    private final VectorMirror vectors;
    private final Producer<String, byte[]> producer;
    private final String compensations;
    private final Meters meters;
    private final Clock clock;
    private final Semaphore running = new Semaphore(1);
    private final SinkPosition position;

    /** @param position where the sink stands, to compare the mirrors once it has caught up (null: compare at once) */
    public Consistency(
            Function<String, MemoryReader> memories,
            Neo4jMirror graph,
            VectorMirror vectors,
            Producer<String, byte[]> producer,
            String compensations,
            Meters meters,
            Clock clock,
            SinkPosition position) {
        this.position = position;
        this.memories = memories;
        this.graph = graph;
        this.vectors = vectors;
        this.producer = producer;
        this.compensations = compensations;
        this.meters = meters;
        this.clock = clock;
    }

    /** How long a check waits for the sink to apply what memory had written when it read memory. */
    static final Duration CATCH_UP = Duration.ofSeconds(5);

    /**
     * Objects changed in memory this long before the check read it may not have been committed to the mirror topic
     * yet when the check read the topic's end: a difference in them is in flight.
     */
    static final Duration RECENT = Duration.ofSeconds(2);

    /** A drift of one object: which, in which mirror, and the version the report carries. */
    private record Finding(Kind kind, String id, long version, Compensation.Sink sink) {}

    /** Compares the namespace's objects in {@code scope}; 429 while another check runs on this instance. */
    public Report check(String ns, Scope scope) {
        return exclusively(() -> compare(ns, scope, new ArrayList<>()));
    }

    private <T> T exclusively(Supplier<T> work) {
        if (!running.tryAcquire()) {
            throw new ApiException(
                    429,
                    "too_many_requests",
                    "a consistency check is running on this instance; one runs at a time (each reads the mirrors)",
                    5);
        }
        try {
            return work.get();
        } finally {
            running.release();
        }
    }

    public Repair repair(String ns) {
        return exclusively(() -> repairNow(ns));
    }

    private Repair repairNow(String ns) {
        List<Finding> findings = new ArrayList<>();
        Report before = compare(ns, Scope.FULL, findings);
        // one report per object is enough: memory re-emits it to both mirrors
        Map<String, Finding> unique = new HashMap<>();
        findings.forEach(f -> unique.putIfAbsent(f.kind().wireName() + "/" + f.id(), f));
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try {
            for (Finding f : unique.values()) {
                Compensation c = new Compensation(
                        ns,
                        f.version(),
                        f.sink(),
                        f.kind(),
                        "upsert",
                        f.id(),
                        Compensation.Outcome.DRIFTED,
                        "found by the consistency check",
                        0,
                        clock.instant());
                sent.add(producer.send(new ProducerRecord<>(compensations, ns, Json.toBytes(c))));
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) {
                f.get(15, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw QueryException.unavailable("the repair could not be sent: " + e);
        }
        meters.driftRepaired(unique.size());
        return new Repair(ns, unique.size(), before);
    }

    private Report compare(String ns, Scope scope, List<Finding> findings) {
        if (graph == null && vectors == null) {
            throw QueryException.notConfigured(
                    "no mirror is configured: set ENGRAM_NEO4J_URI and/or ENGRAM_QDRANT_URL");
        }
        MemoryReader memory = memories.apply(ns);
        if (memory.namespace(ns).isEmpty()) {
            throw QueryException.notFound("namespace '" + ns + "' has no memory");
        }
        Instant started = clock.instant();
        // a first pass counts (nothing kept); a namespace too large for a bounded check is sampled by bucket
        long total = 0;
        long rejected = 0;
        for (Kind kind : Kind.values()) {
            long[] counts = {0, 0};
            memory.forEachMirrorEntry(ns, kind, (id, e) -> {
                counts[0]++;
                counts[1] += e.compensated() ? 1 : 0;
            });
            total += counts[0];
            rejected += counts[1];
        }
        Set<Integer> buckets = scope == Scope.FULL || total <= SAMPLE_OBJECTS
                ? null
                : sampleBuckets((int) Math.min(
                        MirrorDigest.BUCKETS, Math.ceilDiv(MirrorDigest.BUCKETS * (long) SAMPLE_OBJECTS, total)));
        Map<Kind, Map<String, MirrorEntry>> entries = new HashMap<>();
        long compared = 0;
        for (Kind kind : Kind.values()) {
            Map<String, MirrorEntry> ofKind = new TreeMap<>();
            memory.forEachMirrorEntry(ns, kind, (id, e) -> {
                if (buckets == null || buckets.contains(MirrorDigest.bucket(id))) {
                    ofKind.put(id, e);
                }
            });
            entries.put(kind, ofKind);
            compared += ofKind.size();
        }
        SinkPosition.At at = sinkCaughtUp(ns);
        Instant recent = started.minus(RECENT);
        // a difference is in flight when the sink had not caught up, or the object changed around the check
        InFlight inFlight = (kind, id) -> {
            if (at != null && !at.caughtUp()) {
                return true;
            }
            MirrorEntry before = entries.get(kind).get(id);
            if (before != null && !before.at().isBefore(recent)) {
                return true;
            }
            MirrorEntry now = memory.mirrorEntry(ns, kind, id).orElse(null);
            return before == null ? now != null : now == null || now.version() != before.version();
        };
        List<Check> checks = new ArrayList<>();
        if (graph != null) {
            Map<Kind, Map<Integer, Digests.Bucket>> digests = buckets == null ? graph.digests(ns) : null;
            for (Kind kind : Kind.values()) {
                Map<String, Long> expected = expected(entries.get(kind), 0);
                Set<Integer> differing =
                        buckets != null ? buckets : Digests.differing(Digests.of(expected), digests.get(kind));
                Map<String, Long> held = differing.isEmpty() ? Map.of() : graph.versions(ns, kind, differing);
                Map<String, Long> inBuckets = new HashMap<>();
                expected.forEach((id, v) -> {
                    if (differing.contains(MirrorDigest.bucket(id))) {
                        inBuckets.put(id, v);
                    }
                });
                long mirrored = buckets != null
                        ? held.size()
                        : digests.get(kind).values().stream()
                                .mapToLong(Digests.Bucket::count)
                                .sum();
                checks.add(check(
                        kind,
                        "neo4j",
                        entries.get(kind),
                        expected.size(),
                        mirrored,
                        inBuckets,
                        held,
                        findings,
                        inFlight,
                        Compensation.Sink.NEO4J));
            }
        }
        if (vectors != null) {
            Map<VectorKind, Map<String, Long>> held =
                    buckets == null ? vectors.versions(ns) : vectors.versions(ns, buckets);
            for (VectorKind vk : VectorKind.values()) {
                Map<String, Long> expected = expected(entries.get(vk.owner()), vk.bit());
                Map<String, Long> there = held.getOrDefault(vk, Map.of());
                checks.add(check(
                        vk.owner(),
                        "qdrant:" + vk.wireName(),
                        entries.get(vk.owner()),
                        expected.size(),
                        there.size(),
                        expected,
                        there,
                        findings,
                        inFlight,
                        Compensation.Sink.QDRANT));
            }
        }
        long drifting = checks.stream()
                .mapToLong(c -> c.missingCount() + c.staleCount() + c.orphanedCount())
                .sum();
        long pending = checks.stream().mapToLong(Check::inFlight).sum();
        Sample sample = buckets == null
                ? null
                : sample(
                        buckets.size(),
                        compared,
                        total,
                        findings.stream()
                                .map(f -> f.kind().wireName() + "/" + f.id())
                                .distinct()
                                .count());
        return new Report(
                ns,
                drifting == 0 && rejected == 0 && pending == 0,
                drifting,
                rejected,
                pending,
                at,
                buckets != null,
                sample,
                checks);
    }

    /** Whether a difference in one object is in flight rather than drift. */
    @FunctionalInterface
    private interface InFlight {
        boolean test(Kind kind, String id);
    }

    /** Waits (a while) for the sink to apply what memory wrote up to now; where it stands, or null when unknown. */
    private SinkPosition.At sinkCaughtUp(String ns) {
        if (position == null) {
            return null;
        }
        try {
            SinkPosition.At target = position.now(ns);
            return target == null || target.caughtUp() ? target : position.await(target, CATCH_UP);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw QueryException.unavailable("interrupted waiting for the sink");
        } catch (RuntimeException e) {
            throw QueryException.unavailable("cannot read the mirror sink's position: " + e.getMessage());
        }
    }

    /** {@code k} distinct digest buckets drawn at random. */
    private static Set<Integer> sampleBuckets(int k) {
        List<Integer> all = new ArrayList<>();
        for (int b = 0; b < MirrorDigest.BUCKETS; b++) {
            all.add(b);
        }
        Collections.shuffle(all, ThreadLocalRandom.current());
        return new TreeSet<>(all.subList(0, k));
    }

    /**
     * What a sample of {@code compared} of {@code total} objects says: the {@code drifting} objects it found (each
     * once, in whichever mirror), scaled to the namespace, and the Wilson score bound on the drift rate (the rule of
     * three when none drifts).
     */
    static Sample sample(int buckets, long compared, long total, long drifting) {
        double upper;
        if (compared == 0) {
            upper = 1;
        } else if (drifting == 0) {
            upper = Math.min(1, 3.0 / compared);
        } else {
            double n = compared;
            double p = drifting / n;
            double z = 1.96;
            double centre = p + z * z / (2 * n);
            double spread = z * Math.sqrt(p * (1 - p) / n + z * z / (4 * n * n));
            upper = Math.min(1, (centre + spread) / (1 + z * z / n));
        }
        long estimated = compared == 0 ? 0 : Math.round(drifting * (double) total / compared);
        return new Sample(buckets, MirrorDigest.BUCKETS, compared, total, upper, estimated);
    }

    /** The (id → version) memory expects a mirror to hold: not compensated, and with the vector when one is asked. */
    private static Map<String, Long> expected(Map<String, MirrorEntry> entries, int vectorBit) {
        Map<String, Long> out = new HashMap<>();
        entries.forEach((id, e) -> {
            if (!e.compensated() && (vectorBit == 0 || (e.vectors() & vectorBit) != 0)) {
                out.put(id, e.version());
            }
        });
        return out;
    }

    private Check check(
            Kind kind,
            String mirror,
            Map<String, MirrorEntry> entries,
            long memoryCount,
            long mirroredCount,
            Map<String, Long> expected,
            Map<String, Long> held,
            List<Finding> findings,
            InFlight inFlight,
            Compensation.Sink sink) {
        // a compensated object is absent by design, and the mirror that refused it may still hold an older version
        Map<String, Long> mirrored = new HashMap<>(held);
        entries.forEach((id, e) -> {
            if (e.compensated()) {
                mirrored.remove(id);
            }
        });
        Digests.Drift drift = Digests.compare(expected, mirrored);
        long[] pending = {0};
        Predicate<String> drifts = id -> {
            if (inFlight.test(kind, id)) {
                pending[0]++;
                return false;
            }
            return true;
        };
        List<String> missing = drift.missing().stream().filter(drifts).toList();
        List<String> stale = drift.stale().stream().filter(drifts).toList();
        List<String> orphaned = drift.orphaned().stream().filter(drifts).toList();
        missing.forEach(id -> findings.add(new Finding(kind, id, expected.get(id), sink)));
        stale.forEach(id -> findings.add(new Finding(kind, id, expected.get(id), sink)));
        orphaned.forEach(id -> findings.add(new Finding(kind, id, mirrored.get(id), sink)));
        meters.drift(Meters.DriftFinding.MISSING, missing.size());
        meters.drift(Meters.DriftFinding.STALE, stale.size());
        meters.drift(Meters.DriftFinding.ORPHANED, orphaned.size());
        long compensated =
                entries.values().stream().filter(MirrorEntry::compensated).count();
        return new Check(
                kind.wireName(),
                mirror,
                memoryCount,
                mirroredCount,
                compensated,
                missing.size(),
                stale.size(),
                orphaned.size(),
                pending[0],
                first(missing),
                first(stale),
                first(orphaned));
    }

    private static List<String> first(List<String> ids) {
        return ids.size() <= LISTED ? ids : ids.subList(0, LISTED);
    }
}
