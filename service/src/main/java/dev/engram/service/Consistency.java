package dev.engram.service;

import dev.engram.metrics.Meters;
import dev.engram.query.QueryException;
import dev.engram.schemas.Compensation;
import dev.engram.schemas.Json;
import dev.engram.schemas.MirrorDigest;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.schemas.MirrorRecord.VectorKind;
import dev.engram.sinks.Digests;
import dev.engram.sinks.Neo4jMirror;
import dev.engram.sinks.VectorMirror;
import dev.engram.stores.MemoryReader;
import dev.engram.stores.MirrorEntry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The consistency contract: compares a namespace's objects in memory (the authority) with Neo4j and Qdrant by (id,
 * version). Neo4j is compared per bucket of digests first (only differing buckets are listed id by id); Qdrant, which
 * cannot sum in a query, is scrolled for (id, version) payloads. Objects a mirror rejected (compensated) are expected
 * to be absent and counted apart. Repair sends each drifting object to the memory step as a {@code drifted} report,
 * which re-emits its state — or a delete for an orphan — through the mirror topic, in order with everything else.
 */
final class Consistency {

    /** Ids listed per finding; the counts are always whole. */
    static final int LISTED = 100;

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
            List<String> missing,
            List<String> stale,
            List<String> orphaned) {}

    /**
     * The whole comparison of a namespace: consistent when no object drifts and no mirror holds an object it rejected
     * (a rejected object is stale or absent in the mirror that refused it until the repair loop writes it).
     */
    record Report(String namespace, boolean consistent, long drifting, long rejected, List<Check> checks) {}

    /** What a repair sent to the memory step. */
    record Repair(String namespace, long sent, Report before) {}

    private final Function<String, MemoryReader> memories;
    private final Neo4jMirror graph;
    private final VectorMirror vectors;
    private final Producer<String, byte[]> producer;
    private final String compensations;
    private final Meters meters;
    private final Clock clock;

    Consistency(
            Function<String, MemoryReader> memories,
            Neo4jMirror graph,
            VectorMirror vectors,
            Producer<String, byte[]> producer,
            String compensations,
            Meters meters,
            Clock clock) {
        this.memories = memories;
        this.graph = graph;
        this.vectors = vectors;
        this.producer = producer;
        this.compensations = compensations;
        this.meters = meters;
        this.clock = clock;
    }

    /** A drift of one object: which, in which mirror, and the version the report carries. */
    private record Finding(Kind kind, String id, long version, Compensation.Sink sink) {}

    Report check(String ns) {
        return compare(ns, new ArrayList<>());
    }

    Repair repair(String ns) {
        List<Finding> findings = new ArrayList<>();
        Report before = compare(ns, findings);
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

    private Report compare(String ns, List<Finding> findings) {
        if (graph == null && vectors == null) {
            throw QueryException.notConfigured(
                    "no mirror is configured: set ENGRAM_NEO4J_URI and/or ENGRAM_QDRANT_URL");
        }
        MemoryReader memory = memories.apply(ns);
        if (memory.namespace(ns).isEmpty()) {
            throw QueryException.notFound("namespace '" + ns + "' has no memory");
        }
        Map<Kind, Map<String, MirrorEntry>> entries = new HashMap<>();
        for (Kind kind : Kind.values()) {
            entries.put(kind, memory.mirrorEntries(ns, kind));
        }
        List<Check> checks = new ArrayList<>();
        if (graph != null) {
            Map<Kind, Map<Integer, Digests.Bucket>> digests = graph.digests(ns);
            for (Kind kind : Kind.values()) {
                Map<String, Long> expected = expected(entries.get(kind), 0);
                Set<Integer> buckets = Digests.differing(Digests.of(expected), digests.get(kind));
                Map<String, Long> held = buckets.isEmpty() ? Map.of() : graph.versions(ns, kind, buckets);
                Map<String, Long> inBuckets = new HashMap<>();
                expected.forEach((id, v) -> {
                    if (buckets.contains(MirrorDigest.bucket(id))) {
                        inBuckets.put(id, v);
                    }
                });
                long mirrored = digests.get(kind).values().stream()
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
                        Compensation.Sink.NEO4J));
            }
        }
        if (vectors != null) {
            Map<VectorKind, Map<String, Long>> held = vectors.versions(ns);
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
                        Compensation.Sink.QDRANT));
            }
        }
        long drifting = checks.stream()
                .mapToLong(c -> c.missingCount() + c.staleCount() + c.orphanedCount())
                .sum();
        long rejected = entries.values().stream()
                .flatMap(m -> m.values().stream())
                .filter(MirrorEntry::compensated)
                .count();
        return new Report(ns, drifting == 0 && rejected == 0, drifting, rejected, checks);
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
            Compensation.Sink sink) {
        // a compensated object is absent by design, and the mirror that refused it may still hold an older version
        Map<String, Long> mirrored = new HashMap<>(held);
        entries.forEach((id, e) -> {
            if (e.compensated()) {
                mirrored.remove(id);
            }
        });
        Digests.Drift drift = Digests.compare(expected, mirrored);
        drift.missing().forEach(id -> findings.add(new Finding(kind, id, expected.get(id), sink)));
        drift.stale().forEach(id -> findings.add(new Finding(kind, id, expected.get(id), sink)));
        drift.orphaned().forEach(id -> findings.add(new Finding(kind, id, mirrored.get(id), sink)));
        meters.drift(Meters.DriftFinding.MISSING, drift.missing().size());
        meters.drift(Meters.DriftFinding.STALE, drift.stale().size());
        meters.drift(Meters.DriftFinding.ORPHANED, drift.orphaned().size());
        long compensated =
                entries.values().stream().filter(MirrorEntry::compensated).count();
        return new Check(
                kind.wireName(),
                mirror,
                memoryCount,
                mirroredCount,
                compensated,
                drift.missing().size(),
                drift.stale().size(),
                drift.orphaned().size(),
                first(drift.missing()),
                first(drift.stale()),
                first(drift.orphaned()));
    }

    private static List<String> first(List<String> ids) {
        return ids.size() <= LISTED ? ids : ids.subList(0, LISTED);
    }
}
