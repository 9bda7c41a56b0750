package dev.engram.sinks;

import static io.qdrant.client.ConditionFactory.matchKeyword;
import static io.qdrant.client.ConditionFactory.matchValues;
import static io.qdrant.client.PointIdFactory.id;
import static io.qdrant.client.ValueFactory.value;
import static io.qdrant.client.VectorsFactory.vectors;
import static java.nio.charset.StandardCharsets.UTF_8;

import dev.engram.schemas.MirrorDigest;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.VectorKind;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.qdrant.client.QdrantClient;
import io.qdrant.client.QdrantGrpcClient;
import io.qdrant.client.grpc.Collections.Distance;
import io.qdrant.client.grpc.Collections.KeywordIndexParams;
import io.qdrant.client.grpc.Collections.PayloadIndexParams;
import io.qdrant.client.grpc.Collections.PayloadSchemaType;
import io.qdrant.client.grpc.Collections.VectorParams;
import io.qdrant.client.grpc.Common.Filter;
import io.qdrant.client.grpc.Common.PointId;
import io.qdrant.client.grpc.JsonWithInt.Value;
import io.qdrant.client.grpc.Points.DeletePoints;
import io.qdrant.client.grpc.Points.PayloadIncludeSelector;
import io.qdrant.client.grpc.Points.PointStruct;
import io.qdrant.client.grpc.Points.PointsIdsList;
import io.qdrant.client.grpc.Points.PointsSelector;
import io.qdrant.client.grpc.Points.RetrievedPoint;
import io.qdrant.client.grpc.Points.ScrollPoints;
import io.qdrant.client.grpc.Points.ScrollResponse;
import io.qdrant.client.grpc.Points.UpsertPoints;
import io.qdrant.client.grpc.Points.WithPayloadSelector;
import io.qdrant.client.grpc.Points.WithVectorsSelector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The vector mirror: one Qdrant collection per kind of vector ({@code <prefix>passage}, {@code memory}, {@code entity},
 * {@code fact}, {@code question}), created with the embedder's dimension and cosine distance on first use, with a
 * tenant index on {@code namespace}. A point's id is derived from (namespace, kind, object id), so writes are
 * idempotent; its payload holds the namespace, object id, document, version and digest parts. Every write waits until
 * Qdrant applied it ({@code wait=true}), and never lowers a point's version.
 */
public final class QdrantMirror implements VectorMirror {

    /** How to reach Qdrant. */
    public record Settings(
            String host, int port, boolean tls, String apiKey, String collectionPrefix, Duration timeout) {
        public Settings {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(timeout, "timeout");
            collectionPrefix = collectionPrefix == null ? "" : collectionPrefix;
        }

        /** Never shows the API key. */
        @Override
        public String toString() {
            return "Qdrant(" + host + ":" + port + (tls ? ", tls" : "") + ", collections " + collectionPrefix
                    + "*, timeout " + timeout + ")";
        }
    }

    private static final int SCROLL_PAGE = 1000;
    /** Reads of versions fetch two payload fields, never the texts. */
    private static final WithPayloadSelector VERSION_ONLY = WithPayloadSelector.newBuilder()
            .setInclude(
                    PayloadIncludeSelector.newBuilder().addFields("object_id").addFields("version"))
            .build();

    private final QdrantClient client;
    private final Settings settings;
    /** Collections known to exist; the sink thread and HTTP threads (the consistency check) share it. */
    private final Set<String> ready = ConcurrentHashMap.newKeySet();

    public QdrantMirror(Settings settings) {
        this(
                new QdrantClient(withKey(
                                QdrantGrpcClient.newBuilder(settings.host(), settings.port(), settings.tls()),
                                settings.apiKey())
                        .withTimeout(settings.timeout())
                        .build()),
                settings);
    }

    /** Over a client built elsewhere (tests over an in-process channel). */
    public QdrantMirror(QdrantClient client, Settings settings) {
        this.client = client;
        this.settings = settings;
    }

    private static QdrantGrpcClient.Builder withKey(QdrantGrpcClient.Builder b, String apiKey) {
        return apiKey == null || apiKey.isBlank() ? b : b.withApiKey(apiKey);
    }

    /** The collection of a kind of vector. */
    public String collection(VectorKind kind) {
        return settings.collectionPrefix() + kind.wireName();
    }

    /** The id of the point holding an object's vector of one kind. */
    public static UUID pointId(String namespace, MirrorRecord.Kind kind, String objectId) {
        return UUID.nameUUIDFromBytes((namespace + '\u0000' + kind.wireName() + '\u0000' + objectId).getBytes(UTF_8));
    }

    @Override
    public List<String> points(MirrorRecord record) {
        if (record.vectors().isEmpty()) {
            return List.of();
        }
        String id = pointId(record.namespace(), record.kind(), record.id()).toString();
        List<String> out = new ArrayList<>();
        record.vectors().keySet().forEach(v -> out.add(collection(v) + "/" + id));
        return out;
    }

    @Override
    public Map<MirrorRecord, String> apply(List<MirrorRecord> records) {
        // the last record of an object in the batch is its state; earlier ones are superseded within the batch
        Map<String, MirrorRecord> last = new LinkedHashMap<>();
        for (MirrorRecord r : records) {
            if (!VectorKind.of(r.kind()).isEmpty()) {
                last.remove(key(r));
                last.put(key(r), r);
            }
        }
        Map<MirrorRecord, String> rejected = new LinkedHashMap<>();
        for (VectorKind kind : VectorKind.values()) {
            List<MirrorRecord> ofKind =
                    last.values().stream().filter(r -> r.kind() == kind.owner()).toList();
            if (!ofKind.isEmpty()) {
                writeKind(kind, ofKind, rejected);
            }
        }
        return rejected;
    }

    private void writeKind(VectorKind kind, List<MirrorRecord> records, Map<MirrorRecord, String> rejected) {
        Map<UUID, Long> held = versions(kind, records);
        List<PointStruct> upserts = new ArrayList<>();
        Map<PointStruct, MirrorRecord> sources = new HashMap<>();
        List<PointId> deletes = new ArrayList<>();
        for (MirrorRecord r : records) {
            UUID pid = pointId(r.namespace(), r.kind(), r.id());
            Long version = held.get(pid);
            if (version != null && version > r.version()) {
                continue; // a newer version is there already
            }
            float[] vector = r.vectors().get(kind);
            if (vector == null) {
                if (version != null) {
                    deletes.add(id(pid));
                }
                continue;
            }
            ensureCollection(kind, vector.length);
            PointStruct point = PointStruct.newBuilder()
                    .setId(id(pid))
                    .setVectors(vectors(vector))
                    .putAllPayload(payload(r, kind))
                    .build();
            upserts.add(point);
            sources.put(point, r);
        }
        if (!deletes.isEmpty() && ready.contains(collection(kind))) {
            delete(kind, deletes);
        }
        if (upserts.isEmpty()) {
            return;
        }
        try {
            upsert(kind, upserts);
        } catch (RuntimeException e) {
            if (!SinkFailure.permanent(e) || upserts.size() == 1) {
                if (SinkFailure.permanent(e)) {
                    rejected.put(sources.get(upserts.get(0)), SinkFailure.reason(e));
                    return;
                }
                throw e;
            }
            // a rejected batch: find the points Qdrant refuses, one by one
            for (PointStruct p : upserts) {
                try {
                    upsert(kind, List.of(p));
                } catch (RuntimeException one) {
                    if (!SinkFailure.permanent(one)) {
                        throw one;
                    }
                    rejected.put(sources.get(p), SinkFailure.reason(one));
                }
            }
        }
    }

    private void upsert(VectorKind kind, List<PointStruct> points) {
        await(client.upsertAsync(UpsertPoints.newBuilder()
                .setCollectionName(collection(kind))
                .addAllPoints(points)
                .setWait(true)
                .build()));
    }

    private void delete(VectorKind kind, List<PointId> ids) {
        await(client.deleteAsync(DeletePoints.newBuilder()
                .setCollectionName(collection(kind))
                .setPoints(PointsSelector.newBuilder()
                        .setPoints(PointsIdsList.newBuilder().addAllIds(ids)))
                .setWait(true)
                .build()));
    }

    @Override
    public void undo(Collection<MirrorRecord> records) {
        for (VectorKind kind : VectorKind.values()) {
            List<MirrorRecord> ofKind =
                    records.stream().filter(r -> r.kind() == kind.owner()).toList();
            if (ofKind.isEmpty() || !exists(kind)) {
                continue;
            }
            // never a newer version than the one taken back
            Map<UUID, Long> held = versions(kind, ofKind);
            List<PointId> ids = new ArrayList<>();
            for (MirrorRecord r : ofKind) {
                UUID pid = pointId(r.namespace(), r.kind(), r.id());
                Long version = held.get(pid);
                if (version != null && version <= r.version()) {
                    ids.add(id(pid));
                }
            }
            if (!ids.isEmpty()) {
                delete(kind, ids);
            }
        }
    }

    /** The versions Qdrant holds for these objects' points of one kind. */
    private Map<UUID, Long> versions(VectorKind kind, List<MirrorRecord> records) {
        if (!exists(kind)) {
            return Map.of();
        }
        List<PointId> ids = records.stream()
                .map(r -> id(pointId(r.namespace(), r.kind(), r.id())))
                .toList();
        List<RetrievedPoint> got = await(client.retrieveAsync(
                collection(kind),
                ids,
                VERSION_ONLY,
                WithVectorsSelector.newBuilder().setEnable(false).build(),
                null));
        Map<UUID, Long> out = new HashMap<>();
        for (RetrievedPoint p : got) {
            Value v = p.getPayloadMap().get("version");
            if (v != null) {
                out.put(UUID.fromString(p.getId().getUuid()), v.getIntegerValue());
            }
        }
        return out;
    }

    @Override
    public Map<VectorKind, Map<String, Long>> versions(String namespace) {
        return versionsWhere(Filter.newBuilder()
                .addMust(matchKeyword("namespace", namespace))
                .build());
    }

    @Override
    public Map<VectorKind, Map<String, Long>> versions(String namespace, Set<Integer> buckets) {
        return versionsWhere(Filter.newBuilder()
                .addMust(matchKeyword("namespace", namespace))
                .addMust(matchValues(
                        "bucket",
                        buckets.stream().map(Integer::longValue).sorted().toList()))
                .build());
    }

    private Map<VectorKind, Map<String, Long>> versionsWhere(Filter filter) {
        Map<VectorKind, Map<String, Long>> out = new EnumMap<>(VectorKind.class);
        for (VectorKind kind : VectorKind.values()) {
            Map<String, Long> ids = new HashMap<>();
            out.put(kind, ids);
            if (!exists(kind)) {
                continue;
            }
            PointId offset = null;
            do {
                ScrollPoints.Builder scroll = ScrollPoints.newBuilder()
                        .setCollectionName(collection(kind))
                        .setFilter(filter)
                        .setLimit(SCROLL_PAGE)
                        .setWithPayload(VERSION_ONLY);
                if (offset != null) {
                    scroll.setOffset(offset);
                }
                ScrollResponse page = await(client.scrollAsync(scroll.build()));
                for (RetrievedPoint p : page.getResultList()) {
                    Value id = p.getPayloadMap().get("object_id");
                    Value version = p.getPayloadMap().get("version");
                    if (id != null && version != null) {
                        ids.put(id.getStringValue(), version.getIntegerValue());
                    }
                }
                offset = page.hasNextPageOffset() ? page.getNextPageOffset() : null;
            } while (offset != null);
        }
        return out;
    }

    private boolean exists(VectorKind kind) {
        String name = collection(kind);
        if (ready.contains(name)) {
            return true;
        }
        if (Boolean.TRUE.equals(await(client.collectionExistsAsync(name)))) {
            ready.add(name);
            return true;
        }
        return false;
    }

    private void ensureCollection(VectorKind kind, int dimension) {
        if (exists(kind)) {
            return;
        }
        String name = collection(kind);
        try {
            await(client.createCollectionAsync(
                    name,
                    VectorParams.newBuilder()
                            .setSize(dimension)
                            .setDistance(Distance.Cosine)
                            .build()));
        } catch (StatusRuntimeException e) {
            // ALREADY_EXISTS: another instance created it first, which is as good
            if (e.getStatus().getCode() != Status.Code.ALREADY_EXISTS) {
                throw e;
            }
        }
        await(client.createPayloadIndexAsync(
                name,
                "namespace",
                PayloadSchemaType.Keyword,
                PayloadIndexParams.newBuilder()
                        .setKeywordIndexParams(KeywordIndexParams.newBuilder().setIsTenant(true))
                        .build(),
                true,
                null,
                settings.timeout()));
        ready.add(name);
    }

    /** A string payload value; an absent string is an empty one (the stores never ask Qdrant for null). */
    private static Value text(String s) {
        return value(s == null ? "" : s);
    }

    private static Map<String, Value> payload(MirrorRecord r, VectorKind kind) {
        Map<String, Value> p = new HashMap<>();
        p.put("namespace", value(r.namespace()));
        p.put("kind", value(kind.wireName()));
        p.put("object_id", value(r.id()));
        p.put("version", value(r.version()));
        p.put("bucket", value(MirrorDigest.bucket(r.id())));
        p.put("hash", value(MirrorDigest.hash(r.id(), r.version())));
        switch (r.object()) {
            case MirrorRecord.Passage x -> {
                p.put("document_id", text(x.documentId()));
                p.put("passage_id", value(r.id()));
                p.put("text", text(kind == VectorKind.MEMORY && x.memory() != null ? x.memory() : x.text()));
            }
            case MirrorRecord.Entity x -> {
                p.put("name", text(x.name()));
                p.put("resolved_id", text(x.resolvedId()));
            }
            case MirrorRecord.Fact x -> {
                if (x.documentId() != null) {
                    p.put("document_id", text(x.documentId()));
                }
                p.put("passage_id", text(x.passageId()));
                p.put("text", text(x.head() + " " + x.relation() + " " + x.tail()));
            }
            case MirrorRecord.Question x -> {
                if (x.documentId() != null) {
                    p.put("document_id", text(x.documentId()));
                }
                p.put("passage_id", text(x.passageId()));
                p.put("text", text(x.text()));
            }
            default -> {}
        }
        return p;
    }

    private static String key(MirrorRecord r) {
        return r.namespace() + '\u0000' + r.kind().wireName() + '\u0000' + r.id();
    }

    private <T> T await(Future<T> future) {
        try {
            return future.get(settings.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for Qdrant", e);
        } catch (ExecutionException e) {
            Throwable cause = SinkFailure.unwrap(e);
            if (cause instanceof StatusRuntimeException s && s.getStatus().getCode() == Status.Code.NOT_FOUND) {
                ready.clear(); // a collection was dropped behind our back: it is created again on the next write
            }
            throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new IllegalStateException("Qdrant did not answer within " + settings.timeout(), e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
