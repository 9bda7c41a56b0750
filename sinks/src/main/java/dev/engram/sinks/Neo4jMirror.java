package dev.engram.sinks;

import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.sinks.GraphModel.Element;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.neo4j.driver.AuthToken;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Config;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;
import org.neo4j.driver.Logging;
import org.neo4j.driver.Record;
import org.neo4j.driver.Session;
import org.neo4j.driver.SessionConfig;
import org.neo4j.driver.Transaction;
import org.neo4j.driver.TransactionConfig;

/**
 * The graph mirror: writes memory objects to Neo4j in batched, parameterized {@code UNWIND … MERGE} transactions, each
 * together with the input position it reaches (an {@code :EngramOffset} node per sink group and partition), so that a
 * restart resumes exactly after the last batch whose effects are visible.
 */
public final class Neo4jMirror implements AutoCloseable {

    /** How to reach Neo4j. */
    public record Settings(String uri, String user, String password, String database, Duration timeout) {
        public Settings {
            Objects.requireNonNull(uri, "uri");
            Objects.requireNonNull(timeout, "timeout");
        }

        /** Never shows the password. */
        @Override
        public String toString() {
            return "Neo4j(" + uri + ", user " + user + ", database " + database + ", timeout " + timeout + ")";
        }
    }

    /** Where a sink group stands in one partition: next offset to write to the graph, and to the vectors. */
    public record Position(long graph, long vectors) {
        public static final Position NONE = new Position(-1, -1);
    }

    private final Driver driver;
    private final SessionConfig session;
    private final TransactionConfig tx;
    private final Duration timeout;

    public Neo4jMirror(Settings settings) {
        this.timeout = settings.timeout();
        AuthToken auth = settings.user() == null || settings.user().isBlank()
                ? AuthTokens.none()
                : AuthTokens.basic(settings.user(), settings.password() == null ? "" : settings.password());
        this.driver = GraphDatabase.driver(
                settings.uri(),
                auth,
                Config.builder()
                        .withConnectionTimeout(settings.timeout().toMillis(), TimeUnit.MILLISECONDS)
                        .withConnectionAcquisitionTimeout(2 * settings.timeout().toMillis(), TimeUnit.MILLISECONDS)
                        .withMaxTransactionRetryTime(0, TimeUnit.MILLISECONDS)
                        .withLogging(Logging.slf4j())
                        .build());
        this.session = settings.database() == null || settings.database().isBlank()
                ? SessionConfig.defaultConfig()
                : SessionConfig.forDatabase(settings.database());
        this.tx = TransactionConfig.builder().withTimeout(settings.timeout()).build();
    }

    /** Creates the constraints and indexes that key every element by (namespace, id), if they are missing. */
    public void ensureSchema() {
        try (Session s = driver.session(session)) {
            for (Element e : Element.values()) {
                s.run(e.schema()).consume();
            }
            s.run("CREATE CONSTRAINT engram_offset_key IF NOT EXISTS FOR (o:EngramOffset) "
                            + "REQUIRE (o.group, o.topic, o.partition) IS UNIQUE")
                    .consume();
            // the writes name these indexes in their hints, which Neo4j ignores until an index is online
            List<String> indexes = new ArrayList<>();
            for (Element e : Element.values()) {
                indexes.add(e.schemaName());
            }
            indexes.add("engram_offset_key");
            for (String index : indexes) {
                s.run(
                                "CALL db.awaitIndex($index, $seconds)",
                                Map.of("index", index, "seconds", Math.max(1, timeout.toSeconds())))
                        .consume();
            }
        }
    }

    /** Where {@code group} stands in the partition, {@link Position#NONE} when it never wrote there. */
    public Position position(String group, String topic, int partition) {
        try (Session s = driver.session(session)) {
            List<Record> rows = s.run(
                            "MATCH (o:EngramOffset {group: $group, topic: $topic, partition: $partition}) "
                                    + "RETURN o.graph AS graph, o.vectors AS vectors",
                            Map.of("group", group, "topic", topic, "partition", partition))
                    .list();
            if (rows.isEmpty()) {
                return Position.NONE;
            }
            Record r = rows.get(0);
            return new Position(
                    r.get("graph").isNull() ? -1 : r.get("graph").asLong(),
                    r.get("vectors").isNull() ? -1 : r.get("vectors").asLong());
        }
    }

    /**
     * Writes {@code records} (in their order) and moves the graph position of the partition to {@code next}, in one
     * transaction; returns how many elements were written (the rest held newer versions).
     */
    public long apply(List<MirrorRecord> records, String group, String topic, int partition, long next) {
        return apply(records, group, topic, partition, next, false);
    }

    /**
     * Like {@link #apply(List, String, String, int, long)}; with {@code vectorsToo} the vector position moves in the
     * same transaction (a sink without a vector mirror has nothing to write back, and saves a transaction per batch).
     */
    public long apply(
            List<MirrorRecord> records, String group, String topic, int partition, long next, boolean vectorsToo) {
        try (Session s = driver.session(session);
                Transaction t = s.beginTransaction(tx)) {
            long applied = write(t, records);
            move(t, vectorsToo ? MOVE_BOTH : MOVE_GRAPH, group, topic, partition, next);
            t.commit();
            return applied;
        }
    }

    private static final String MOVE_GRAPH =
            "MERGE (o:EngramOffset {group: $group, topic: $topic, partition: $partition})"
                    + " SET o.graph = CASE WHEN coalesce(o.graph, -1) < $next THEN $next ELSE o.graph END";
    /** Both positions: the graph one too, which a batch with rejections moves only once they are reported. */
    static final String MOVE_BOTH =
            MOVE_GRAPH + ", o.vectors = CASE WHEN coalesce(o.vectors, -1) < $next THEN $next ELSE o.vectors END";

    /** Moves a partition's position(s) to {@code next}, never back. */
    private static void move(Transaction t, String statement, String group, String topic, int partition, long next) {
        t.run(statement, Map.of("group", group, "topic", topic, "partition", partition, "next", next))
                .consume();
    }

    /** Writes records without moving any position (repairs of single records, tests). */
    public long apply(List<MirrorRecord> records) {
        try (Session s = driver.session(session);
                Transaction t = s.beginTransaction(tx)) {
            long applied = write(t, records);
            t.commit();
            return applied;
        }
    }

    private long write(Transaction t, List<MirrorRecord> records) {
        long applied = 0;
        for (GraphModel.Run run : runs(records)) {
            List<Map<String, Object>> rows =
                    run.records().stream().map(GraphModel::row).toList();
            String query = run.delete() ? run.element().delete() : run.element().upsert();
            applied +=
                    t.run(query, Map.of("rows", rows)).single().get("applied").asLong();
        }
        return applied;
    }

    /**
     * Records the Qdrant points written for each object (the reference write-back) and moves the positions of the
     * partition to {@code next}, in one transaction.
     */
    public void writeBack(
            Map<MirrorRecord, List<String>> points, String group, String topic, int partition, long next) {
        try (Session s = driver.session(session);
                Transaction t = s.beginTransaction(tx)) {
            Map<Element, List<Map<String, Object>>> byElement = new EnumMap<>(Element.class);
            points.forEach((r, ids) -> {
                Map<String, Object> row = new HashMap<>();
                row.put("namespace", r.namespace());
                row.put("id", r.id());
                row.put("version", r.version());
                row.put("points", ids);
                byElement
                        .computeIfAbsent(Element.of(r.kind()), k -> new ArrayList<>())
                        .add(row);
            });
            byElement.forEach(
                    (e, rows) -> t.run(e.writeBack(), Map.of("rows", rows)).consume());
            move(t, MOVE_BOTH, group, topic, partition, next);
            t.commit();
        }
    }

    /** Takes back the objects' elements at their versions (never a newer one): the other mirror rejected them. */
    public void undo(Collection<MirrorRecord> records) {
        if (records.isEmpty()) {
            return;
        }
        try (Session s = driver.session(session);
                Transaction t = s.beginTransaction(tx)) {
            Map<Element, List<Map<String, Object>>> byElement = new EnumMap<>(Element.class);
            for (MirrorRecord r : records) {
                byElement
                        .computeIfAbsent(Element.of(r.kind()), k -> new ArrayList<>())
                        .add(Map.of("namespace", r.namespace(), "id", r.id(), "version", r.version()));
            }
            byElement.forEach((e, rows) -> t.run(e.undo(), Map.of("rows", rows)).consume());
            t.commit();
        }
    }

    /** Per kind, per bucket: the count and hash sum of a namespace's elements. */
    public Map<Kind, Map<Integer, Digests.Bucket>> digests(String namespace) {
        Map<Kind, Map<Integer, Digests.Bucket>> out = new EnumMap<>(Kind.class);
        try (Session s = driver.session(session)) {
            for (Element e : Element.values()) {
                Map<Integer, Digests.Bucket> buckets = new HashMap<>();
                for (Record r :
                        s.run(e.digest(), Map.of("namespace", namespace)).list()) {
                    if (r.get("bucket").isNull()) {
                        continue;
                    }
                    buckets.put(
                            r.get("bucket").asInt(),
                            new Digests.Bucket(
                                    r.get("count").asLong(), r.get("sum").asLong()));
                }
                out.put(e.kind, buckets);
            }
        }
        return out;
    }

    /** The (id → version) of a namespace's elements of one kind in some buckets. */
    public Map<String, Long> versions(String namespace, Kind kind, Collection<Integer> buckets) {
        Map<String, Long> out = new HashMap<>();
        try (Session s = driver.session(session)) {
            for (Record r : s.run(
                            Element.of(kind).versions(),
                            Map.of("namespace", namespace, "buckets", List.copyOf(buckets)))
                    .list()) {
                out.put(r.get("id").asString(), r.get("version").asLong());
            }
        }
        return out;
    }

    /** Runs a read query (tests, tools). */
    public List<Record> read(String query, Map<String, Object> parameters) {
        try (Session s = driver.session(session)) {
            return s.run(query, parameters).list();
        }
    }

    /**
     * The statements of a batch: a few runs of one element and op each. Each record is an object's whole state at a
     * version, so only the last record of an object (its namespace and id: ids repeat across namespaces) matters;
     * within a segment deletes go first (relationships, then
     * nodes), then node upserts in the order of {@link Element} (a theme after the passages it groups), then
     * relationship upserts. A new segment starts where that order would change the outcome: at the delete of a node
     * that an upsert before it links to (written first, the upsert would bring the node back as a placeholder), and at
     * the upsert of a passage that a theme before it groups. So a batch ends exactly where writing record by record
     * ends, in a handful of statements instead of one per change of kind.
     */
    static List<GraphModel.Run> runs(List<MirrorRecord> records) {
        List<GraphModel.Run> runs = new ArrayList<>();
        Map<Element, Map<Key, MirrorRecord>> segment = new EnumMap<>(Element.class);
        Set<Key> linked = new HashSet<>();
        Set<Key> grouped = new HashSet<>();
        for (MirrorRecord r : records) {
            Element e = Element.of(r.kind());
            boolean conflict = r.deleted()
                    ? e.node() && linked.contains(new Key(r.namespace(), e.label + '/' + r.id()))
                    : e == Element.PASSAGE && grouped.contains(new Key(r.namespace(), r.id()));
            if (conflict) {
                flush(runs, segment);
                linked.clear();
                grouped.clear();
            }
            Map<Key, MirrorRecord> ofElement = segment.computeIfAbsent(e, x -> new LinkedHashMap<>());
            Key key = new Key(r.namespace(), r.id());
            ofElement.remove(key);
            ofElement.put(key, r);
            if (r.object() != null) {
                links(r, linked, grouped);
            }
        }
        flush(runs, segment);
        return runs;
    }

    /** An object of one namespace: ids such as {@code theme-1} or a user's {@code doc-1} repeat across namespaces. */
    private record Key(String namespace, String id) {}

    /** The nodes an upsert links to ({@code Label/id}), and the passages a theme groups, in its namespace. */
    private static void links(MirrorRecord r, Set<Key> linked, Set<Key> grouped) {
        String ns = r.namespace();
        switch (r.object()) {
            case MirrorRecord.Passage p -> linked.add(new Key(ns, "Document/" + p.documentId()));
            case MirrorRecord.Question q -> linked.add(new Key(ns, "Passage/" + q.passageId()));
            case MirrorRecord.Entity x -> linked.add(new Key(ns, "Entity/" + x.resolvedId()));
            case MirrorRecord.Mention m -> {
                linked.add(new Key(ns, "Passage/" + m.passageId()));
                linked.add(new Key(ns, "Entity/" + m.entityId()));
            }
            case MirrorRecord.Fact f -> {
                linked.add(new Key(ns, "Entity/" + f.headId()));
                linked.add(new Key(ns, "Entity/" + f.tailId()));
            }
            case MirrorRecord.Theme t -> t.passageIds().forEach(id -> grouped.add(new Key(ns, id)));
            case MirrorRecord.Document d -> {}
        }
    }

    private static void flush(List<GraphModel.Run> runs, Map<Element, Map<Key, MirrorRecord>> segment) {
        List<Element> deletes = new ArrayList<>(List.of(Element.values()));
        Collections.reverse(deletes);
        for (Element e : deletes) {
            add(runs, e, true, segment.get(e));
        }
        for (Element e : Element.values()) {
            add(runs, e, false, segment.get(e));
        }
        segment.clear();
    }

    private static void add(List<GraphModel.Run> runs, Element e, boolean delete, Map<Key, MirrorRecord> last) {
        if (last == null) {
            return;
        }
        List<MirrorRecord> these =
                last.values().stream().filter(r -> r.deleted() == delete).toList();
        if (!these.isEmpty()) {
            runs.add(new GraphModel.Run(e, delete, these));
        }
    }

    @Override
    public void close() {
        driver.close();
    }
}
