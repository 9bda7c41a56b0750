package dev.engram.sinks;

import io.grpc.BindableService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.qdrant.client.grpc.Collections.CollectionDescription;
import io.qdrant.client.grpc.Collections.CollectionExists;
import io.qdrant.client.grpc.Collections.CollectionExistsRequest;
import io.qdrant.client.grpc.Collections.CollectionExistsResponse;
import io.qdrant.client.grpc.Collections.CollectionInfo;
import io.qdrant.client.grpc.Collections.CollectionOperationResponse;
import io.qdrant.client.grpc.Collections.CollectionStatus;
import io.qdrant.client.grpc.Collections.CreateCollection;
import io.qdrant.client.grpc.Collections.DeleteCollection;
import io.qdrant.client.grpc.Collections.GetCollectionInfoRequest;
import io.qdrant.client.grpc.Collections.GetCollectionInfoResponse;
import io.qdrant.client.grpc.Collections.ListCollectionsRequest;
import io.qdrant.client.grpc.Collections.ListCollectionsResponse;
import io.qdrant.client.grpc.Collections.PayloadSchemaInfo;
import io.qdrant.client.grpc.Collections.PayloadSchemaType;
import io.qdrant.client.grpc.CollectionsGrpc;
import io.qdrant.client.grpc.Common.Condition;
import io.qdrant.client.grpc.Common.FieldCondition;
import io.qdrant.client.grpc.Common.Filter;
import io.qdrant.client.grpc.Common.Match;
import io.qdrant.client.grpc.Common.PointId;
import io.qdrant.client.grpc.JsonWithInt.Value;
import io.qdrant.client.grpc.Points.CountPoints;
import io.qdrant.client.grpc.Points.CountResponse;
import io.qdrant.client.grpc.Points.CountResult;
import io.qdrant.client.grpc.Points.CreateFieldIndexCollection;
import io.qdrant.client.grpc.Points.DeletePoints;
import io.qdrant.client.grpc.Points.GetPoints;
import io.qdrant.client.grpc.Points.GetResponse;
import io.qdrant.client.grpc.Points.PointStruct;
import io.qdrant.client.grpc.Points.PointsOperationResponse;
import io.qdrant.client.grpc.Points.RetrievedPoint;
import io.qdrant.client.grpc.Points.ScrollPoints;
import io.qdrant.client.grpc.Points.ScrollResponse;
import io.qdrant.client.grpc.Points.UpdateResult;
import io.qdrant.client.grpc.Points.UpdateStatus;
import io.qdrant.client.grpc.Points.UpsertPoints;
import io.qdrant.client.grpc.Points.VectorOutput;
import io.qdrant.client.grpc.Points.VectorsOutput;
import io.qdrant.client.grpc.Points.WithPayloadSelector;
import io.qdrant.client.grpc.Points.WithVectorsSelector;
import io.qdrant.client.grpc.PointsGrpc;
import io.qdrant.client.grpc.QdrantGrpc;
import io.qdrant.client.grpc.QdrantOuterClass.HealthCheckReply;
import io.qdrant.client.grpc.QdrantOuterClass.HealthCheckRequest;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A stand-in for a Qdrant server, for tests only: no real Qdrant can run on the build machines, so this serves the
 * three gRPC services of Qdrant's own protocol (the stubs in the official client's jar) over a real socket, in memory,
 * for exactly the calls the sink makes — and rejects what Qdrant rejects (a vector of the wrong dimension, a missing
 * collection, a collection created twice). {@link #failNext} makes the next calls fail as an unavailable server does.
 */
public final class QdrantStandIn {
    record Coll(
            CreateCollection config,
            TreeMap<String, PointStruct> points,
            Map<String, CreateFieldIndexCollection> indexes) {}

    final Map<String, Coll> collections = new ConcurrentHashMap<>();
    /** Calls still to fail with UNAVAILABLE, as a server that went away. */
    public final AtomicInteger failNext = new AtomicInteger();
    /** When set, upserts of points whose payload holds this text are refused (a store rejecting data). */
    public volatile String rejectText;
    /**
     * While set, upserts hang without an answer (a client can be killed mid-write); once cleared, the held ones fail
     * as UNAVAILABLE without writing anything.
     */
    public volatile boolean holdUpserts;
    /** How many upserts were held. */
    public final AtomicInteger held = new AtomicInteger();

    final AtomicLong opId = new AtomicLong();

    public List<BindableService> services() {
        return List.of(new Collections(), new Points(), new Health());
    }

    // Qdrant orders numeric ids before UUIDs; a sortable key keeps scroll pages stable.
    static String key(PointId id) {
        return id.hasUuid() ? "u:" + id.getUuid() : String.format("n:%020d", id.getNum());
    }

    Coll coll(String name) {
        Coll c = collections.get(name);
        if (c == null) {
            throw Status.NOT_FOUND
                    .withDescription("Not found: Collection `" + name + "` doesn't exist!")
                    .asRuntimeException();
        }
        return c;
    }

    <T> void reply(StreamObserver<T> obs, Supplier<T> body) {
        try {
            if (failNext.get() > 0 && failNext.getAndDecrement() > 0) {
                throw Status.UNAVAILABLE
                        .withDescription("stand-in: unavailable")
                        .asRuntimeException();
            }
            obs.onNext(body.get());
            obs.onCompleted();
        } catch (StatusRuntimeException e) {
            obs.onError(e);
        } catch (RuntimeException e) {
            obs.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
        }
    }

    // real Qdrant answers Completed when wait=true, Acknowledged otherwise
    PointsOperationResponse ok(boolean wait) {
        return PointsOperationResponse.newBuilder()
                .setResult(UpdateResult.newBuilder()
                        .setOperationId(opId.incrementAndGet())
                        .setStatus(wait ? UpdateStatus.Completed : UpdateStatus.Acknowledged))
                .build();
    }

    final class Health extends QdrantGrpc.QdrantImplBase {
        @Override
        public void healthCheck(HealthCheckRequest req, StreamObserver<HealthCheckReply> obs) {
            reply(obs, () -> HealthCheckReply.newBuilder()
                    .setTitle("qdrant stand-in")
                    .setVersion("1.18.0")
                    .build());
        }
    }

    final class Collections extends CollectionsGrpc.CollectionsImplBase {
        @Override
        public void create(CreateCollection req, StreamObserver<CollectionOperationResponse> obs) {
            reply(obs, () -> {
                if (collections.putIfAbsent(
                                req.getCollectionName(), new Coll(req, new TreeMap<>(), new ConcurrentHashMap<>()))
                        != null) {
                    throw Status.ALREADY_EXISTS
                            .withDescription(
                                    "Wrong input: Collection `" + req.getCollectionName() + "` already exists!")
                            .asRuntimeException();
                }
                return CollectionOperationResponse.newBuilder().setResult(true).build();
            });
        }

        @Override
        public void delete(DeleteCollection req, StreamObserver<CollectionOperationResponse> obs) {
            reply(obs, () -> CollectionOperationResponse.newBuilder()
                    .setResult(collections.remove(req.getCollectionName()) != null)
                    .build());
        }

        @Override
        public void collectionExists(CollectionExistsRequest req, StreamObserver<CollectionExistsResponse> obs) {
            reply(obs, () -> CollectionExistsResponse.newBuilder()
                    .setResult(
                            CollectionExists.newBuilder().setExists(collections.containsKey(req.getCollectionName())))
                    .build());
        }

        @Override
        public void list(ListCollectionsRequest req, StreamObserver<ListCollectionsResponse> obs) {
            reply(obs, () -> {
                ListCollectionsResponse.Builder b = ListCollectionsResponse.newBuilder();
                collections
                        .keySet()
                        .forEach(n -> b.addCollections(
                                CollectionDescription.newBuilder().setName(n)));
                return b.build();
            });
        }

        @Override
        public void get(GetCollectionInfoRequest req, StreamObserver<GetCollectionInfoResponse> obs) {
            reply(obs, () -> {
                Coll c = coll(req.getCollectionName());
                CollectionInfo.Builder info = CollectionInfo.newBuilder()
                        .setStatus(CollectionStatus.Green)
                        .setPointsCount(c.points().size());
                info.getConfigBuilder()
                        .getParamsBuilder()
                        .setVectorsConfig(c.config().getVectorsConfig());
                c.indexes()
                        .forEach((f, ix) -> info.putPayloadSchema(
                                f,
                                PayloadSchemaInfo.newBuilder()
                                        .setDataType(PayloadSchemaType.forNumber(ix.getFieldTypeValue()
                                                + 1)) // FieldType is 0-based, PayloadSchemaType 1-based
                                        .setParams(ix.getFieldIndexParams())
                                        .build()));
                return GetCollectionInfoResponse.newBuilder().setResult(info).build();
            });
        }
    }

    final class Points extends PointsGrpc.PointsImplBase {
        @Override
        public void upsert(UpsertPoints req, StreamObserver<PointsOperationResponse> obs) {
            if (holdUpserts) {
                held.incrementAndGet();
                while (holdUpserts) {
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
                obs.onError(Status.UNAVAILABLE
                        .withDescription("stand-in: held upsert dropped")
                        .asRuntimeException());
                return;
            }
            reply(obs, () -> {
                Coll c = coll(req.getCollectionName());
                long dim = c.config().getVectorsConfig().getParams().getSize();
                for (PointStruct p : req.getPointsList()) {
                    Value text = p.getPayloadMap().get("text");
                    if (rejectText != null
                            && text != null
                            && text.getStringValue().contains(rejectText)) {
                        throw Status.INVALID_ARGUMENT
                                .withDescription("Wrong input: refused payload")
                                .asRuntimeException();
                    }
                    int got = p.getVectors().getVector().getDense().getDataCount();
                    if (got != dim) {
                        throw Status.INVALID_ARGUMENT
                                .withDescription(
                                        "Wrong input: Vector dimension error: expected dim: " + dim + ", got " + got)
                                .asRuntimeException();
                    }
                }
                synchronized (c) {
                    req.getPointsList().forEach(p -> c.points().put(key(p.getId()), p));
                }
                return ok(req.getWait());
            });
        }

        @Override
        public void delete(DeletePoints req, StreamObserver<PointsOperationResponse> obs) {
            reply(obs, () -> {
                Coll c = coll(req.getCollectionName());
                synchronized (c) {
                    if (req.getPoints().hasPoints()) {
                        req.getPoints().getPoints().getIdsList().forEach(id -> c.points()
                                .remove(key(id)));
                    } else {
                        c.points()
                                .values()
                                .removeIf(p -> matches(req.getPoints().getFilter(), p));
                    }
                }
                return ok(req.getWait());
            });
        }

        @Override
        public void createFieldIndex(CreateFieldIndexCollection req, StreamObserver<PointsOperationResponse> obs) {
            reply(obs, () -> {
                coll(req.getCollectionName()).indexes().put(req.getFieldName(), req);
                return ok(req.getWait());
            });
        }

        @Override
        public void get(GetPoints req, StreamObserver<GetResponse> obs) {
            reply(obs, () -> {
                Coll c = coll(req.getCollectionName());
                GetResponse.Builder b = GetResponse.newBuilder();
                synchronized (c) {
                    for (PointId id : req.getIdsList()) {
                        PointStruct p = c.points().get(key(id));
                        if (p != null) b.addResult(toRetrieved(p, req.getWithPayload(), req.getWithVectors()));
                    }
                }
                return b.build();
            });
        }

        @Override
        public void scroll(ScrollPoints req, StreamObserver<ScrollResponse> obs) {
            reply(obs, () -> {
                Coll c = coll(req.getCollectionName());
                int limit = req.hasLimit() ? req.getLimit() : 10;
                ScrollResponse.Builder b = ScrollResponse.newBuilder();
                synchronized (c) {
                    var tail = req.hasOffset() ? c.points().tailMap(key(req.getOffset()), true) : c.points();
                    for (PointStruct p : tail.values()) {
                        if (!matches(req.getFilter(), p)) continue;
                        if (b.getResultCount() == limit) {
                            b.setNextPageOffset(p.getId());
                            break;
                        }
                        b.addResult(toRetrieved(p, req.getWithPayload(), req.getWithVectors()));
                    }
                }
                return b.build();
            });
        }

        @Override
        public void count(CountPoints req, StreamObserver<CountResponse> obs) {
            reply(obs, () -> {
                Coll c = coll(req.getCollectionName());
                synchronized (c) {
                    long n = c.points().values().stream()
                            .filter(p -> matches(req.getFilter(), p))
                            .count();
                    return CountResponse.newBuilder()
                            .setResult(CountResult.newBuilder().setCount(n))
                            .build();
                }
            });
        }
    }

    static RetrievedPoint toRetrieved(PointStruct p, WithPayloadSelector wp, WithVectorsSelector wv) {
        RetrievedPoint.Builder b = RetrievedPoint.newBuilder().setId(p.getId());
        if (!wp.hasEnable() || wp.getEnable()) b.putAllPayload(p.getPayloadMap()); // include/exclude not modelled
        if (wv.getEnable()) {
            b.setVectors(VectorsOutput.newBuilder()
                    .setVector(VectorOutput.newBuilder()
                            .setDense(p.getVectors().getVector().getDense())));
        }
        return b.build();
    }

    /** must / should / must_not over keyword, integer, bool, keywords (any) and has_id. */
    static boolean matches(Filter f, PointStruct p) {
        if (f.getMustList().stream().anyMatch(c -> !matches(c, p))) return false;
        if (f.getMustNotList().stream().anyMatch(c -> matches(c, p))) return false;
        return f.getShouldCount() == 0 || f.getShouldList().stream().anyMatch(c -> matches(c, p));
    }

    static boolean matches(Condition c, PointStruct p) {
        return switch (c.getConditionOneOfCase()) {
            case FIELD ->
                matches(c.getField(), p.getPayloadMap().get(c.getField().getKey()));
            case HAS_ID -> c.getHasId().getHasIdList().stream().anyMatch(id -> key(id).equals(key(p.getId())));
            case FILTER -> matches(c.getFilter(), p);
            default ->
                throw Status.UNIMPLEMENTED
                        .withDescription("stand-in: condition " + c.getConditionOneOfCase())
                        .asRuntimeException();
        };
    }

    static boolean matches(FieldCondition fc, Value v) {
        if (v == null) return false;
        if (v.hasListValue())
            return v.getListValue().getValuesList().stream().anyMatch(e -> matches(fc, e)); // arrays: any element
        Match m = fc.getMatch();
        return switch (m.getMatchValueCase()) {
            case KEYWORD -> v.hasStringValue() && v.getStringValue().equals(m.getKeyword());
            case KEYWORDS ->
                v.hasStringValue() && m.getKeywords().getStringsList().contains(v.getStringValue());
            case INTEGER -> v.hasIntegerValue() && v.getIntegerValue() == m.getInteger();
            case INTEGERS ->
                v.hasIntegerValue() && m.getIntegers().getIntegersList().contains(v.getIntegerValue());
            case BOOLEAN -> v.hasBoolValue() && v.getBoolValue() == m.getBoolean();
            default ->
                throw Status.UNIMPLEMENTED
                        .withDescription("stand-in: match " + m.getMatchValueCase())
                        .asRuntimeException();
        };
    }
}
