package dev.engram.sinks;

import dev.engram.schemas.MirrorRecord;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;
import org.neo4j.driver.Session;
import org.neo4j.driver.Transaction;
import org.neo4j.driver.summary.ProfiledPlan;

/**
 * The physical baseline of the graph mirror: the same rows as the sink writes ({@link GraphModel#row}), in the same
 * runs and batches, with the plainest idempotent batched {@code UNWIND … MERGE} — nodes merged by key; relationships,
 * which {@code MERGE} would look for among all those between their endpoints, replaced by key through the
 * (namespace, id) index — and no version guard, no links, no positions, no Kafka, no Qdrant. What the sink does beyond
 * this is what the benchmark's ratio prices.
 */
public final class RawMerge implements AutoCloseable {

    private final Driver driver;

    public RawMerge(String uri) {
        this.driver = GraphDatabase.driver(uri, AuthTokens.none());
    }

    /**
     * Writes the records in batches of {@code batchSize}, one transaction per batch; returns the elements written.
     * {@code nanos} gets the time spent per element.
     */
    public long write(List<MirrorRecord> records, int batchSize, Map<String, Long> nanos) {
        Map<GraphModel.Element, Long> byElement = new EnumMap<>(GraphModel.Element.class);
        long written = write(records, batchSize, Mode.PLAIN, byElement);
        byElement.forEach((e, n) -> nanos.put(e.name().toLowerCase(Locale.ROOT), n));
        return written;
    }

    /**
     * Writes the records with the sink's own statements (version guards and links), without Kafka or positions;
     * {@code nanos} gets the time spent per element and op.
     */
    public long writeModel(List<MirrorRecord> records, int batchSize, Map<String, Long> nanos) {
        Map<GraphModel.Element, Long> byElement = new EnumMap<>(GraphModel.Element.class);
        long written = write(records, batchSize, Mode.MODEL, byElement);
        byElement.forEach((e, n) -> nanos.put(e.name().toLowerCase(Locale.ROOT), n));
        return written;
    }

    /**
     * Like {@link #write}, and each node's links of the mirror's graph model too — a passage's {@code PART_OF} its
     * document, a question's {@code ABOUT} its passage, a merged surface's {@code SAME_AS} its entity, a theme's
     * {@code HAS_MEMBER} its passages — merged as plainly (nothing that left is removed): the same graph as the sink
     * writes, with nothing of what keeps it right under reordering, retries and restarts.
     */
    public long writeWithLinks(List<MirrorRecord> records, int batchSize) {
        return write(records, batchSize, Mode.LINKED, new EnumMap<>(GraphModel.Element.class));
    }

    /** Which statements write the rows: the plain ones, the plain ones with links, or the sink's own. */
    public enum Mode {
        PLAIN,
        LINKED,
        MODEL
    }

    /**
     * Writes the records as {@link #write} does, each statement profiled by Neo4j: per element, per operator
     * ({@code Operator@depth}), the database hits and rows summed over every batch. Database hits count the store
     * and index accesses an operator makes, whatever else runs on the machine: statements are compared by them.
     */
    public Map<String, Map<String, long[]>> profile(List<MirrorRecord> records, int batchSize, Mode mode) {
        Map<String, Map<String, long[]>> out = new TreeMap<>();
        eachRun(records, batchSize, (t, run, rows) -> {
            ProfiledPlan plan = t.run("PROFILE " + statement(run, mode), Map.of("rows", rows))
                    .consume()
                    .profile();
            String element = run.element().name().toLowerCase(Locale.ROOT) + (run.delete() ? " delete" : "");
            sum(plan, 0, out.computeIfAbsent(element, k -> new TreeMap<>()));
        });
        return out;
    }

    /**
     * Has Neo4j plan every statement that writing records runs, in every mode, without writing anything: Neo4j caches a
     * plan per statement, per size class of each list and text parameter (1, up to 10, up to 100, …) and per whether
     * the transaction wrote before it, and a new database starts with none, where a running sink finds its statements
     * planned. Each element's statement of each mode runs with 2, 11, 101, … rows of the set (repeated), the least
     * rows of each size class up to {@code batchSize}'s, and with 1; once as a transaction's first statement and once
     * after a write, in a transaction that is rolled back. The sink's position moves follow, as in its graph write, for
     * each group and topic of {@code positions}. Every contestant is planned for alike, so that each meets the same store: a
     * rolled-back transaction gives the ids it took back to the store, to be used again.
     */
    public void plan(List<MirrorRecord> records, int batchSize, Map<String, String> positions) {
        try (Session s = driver.session()) {
            for (Mode mode : Mode.values()) {
                for (GraphModel.Element e : GraphModel.Element.values()) {
                    for (boolean delete : new boolean[] {true, false}) {
                        List<MirrorRecord> sample = records.stream()
                                .filter(r -> GraphModel.Element.of(r.kind()) == e && r.deleted() == delete)
                                .toList();
                        if (sample.isEmpty()) {
                            continue;
                        }
                        String statement = statement(new GraphModel.Run(e, delete, sample), mode);
                        for (int n : sizeClasses(batchSize)) {
                            List<Map<String, Object>> rows = new ArrayList<>(n);
                            for (int i = 0; i < n; i++) {
                                rows.add(GraphModel.row(sample.get(i % sample.size())));
                            }
                            try (Transaction t = s.beginTransaction()) {
                                t.run(statement, Map.of("rows", rows)).consume();
                                t.run("CREATE (:EngramPlan)").consume();
                                t.run(statement, Map.of("rows", rows)).consume();
                                positions.forEach((group, topic) -> t.run(
                                                Neo4jMirror.MOVE_BOTH,
                                                Map.of("group", group, "topic", topic, "partition", 0, "next", 1L))
                                        .consume());
                                t.rollback();
                            }
                        }
                    }
                }
            }
        }
    }

    /** The least number of rows of each size class Neo4j's plan cache tells apart, up to that of {@code batchSize}. */
    private static List<Integer> sizeClasses(int batchSize) {
        List<Integer> sizes = new ArrayList<>(List.of(1));
        for (long n = 2; n <= batchSize; n = (n - 1) * 10 + 1) {
            sizes.add((int) n);
        }
        return sizes;
    }

    /** Writes one run's rows in the batch's transaction. */
    @FunctionalInterface
    private interface RunWriter {
        void write(Transaction t, GraphModel.Run run, List<Map<String, Object>> rows);
    }

    /** The records in batches of {@code batchSize}, one transaction per batch, run by run as the sink groups them. */
    private void eachRun(List<MirrorRecord> records, int batchSize, RunWriter writer) {
        try (Session s = driver.session()) {
            for (int i = 0; i < records.size(); i += batchSize) {
                List<MirrorRecord> batch = records.subList(i, Math.min(records.size(), i + batchSize));
                try (Transaction t = s.beginTransaction()) {
                    for (GraphModel.Run run : Neo4jMirror.runs(batch)) {
                        writer.write(
                                t,
                                run,
                                run.records().stream().map(GraphModel::row).toList());
                    }
                    t.commit();
                }
            }
        }
    }

    private static void sum(ProfiledPlan plan, int depth, Map<String, long[]> into) {
        long[] hitsAndRows =
                into.computeIfAbsent(plan.operatorType().replaceFirst("@.*", "") + "@" + depth, k -> new long[2]);
        hitsAndRows[0] += plan.dbHits();
        hitsAndRows[1] += plan.records();
        for (ProfiledPlan child : plan.children()) {
            sum(child, depth + 1, into);
        }
    }

    private static String statement(GraphModel.Run run, Mode mode) {
        return switch (mode) {
            case PLAIN -> query(run, false);
            case LINKED -> query(run, true);
            case MODEL -> run.delete() ? run.element().delete() : run.element().upsert();
        };
    }

    private long write(List<MirrorRecord> records, int batchSize, Mode mode, Map<GraphModel.Element, Long> nanos) {
        long[] written = {0};
        eachRun(records, batchSize, (t, run, rows) -> {
            long t0 = System.nanoTime();
            written[0] += t.run(statement(run, mode), Map.of("rows", rows))
                    .single()
                    .get(0)
                    .asLong();
            nanos.merge(run.element(), System.nanoTime() - t0, Long::sum);
        });
        return written[0];
    }

    /** The plain statement of a run; {@code withLinks}: a node's links merged too ({@link #links}). */
    private static String query(GraphModel.Run run, boolean withLinks) {
        GraphModel.Element e = run.element();
        if (run.delete()) {
            return e.node()
                    ? ("UNWIND $rows AS r MATCH (n:%1$s {namespace: r.namespace, id: r.id}) USING INDEX SEEK n:%1$s(namespace, id)"
                                    + " DETACH DELETE n RETURN count(*)")
                            .formatted(e.label)
                    : ("UNWIND $rows AS r MATCH ()-[x:%1$s {namespace: r.namespace, id: r.id}]->() USING INDEX SEEK x:%1$s(namespace, id)"
                                    + " DELETE x RETURN count(*)")
                            .formatted(e.type);
        }
        return e.node()
                ? "UNWIND $rows AS r MERGE (n:%s {namespace: r.namespace, id: r.id}) SET n += r.props, n.version = r.version\n%sRETURN count(n)"
                        .formatted(e.label, withLinks ? links(e) : "")
                : """
                UNWIND $rows AS r
                OPTIONAL MATCH ()-[old:%1$s {namespace: r.namespace, id: r.id}]->()
                USING INDEX SEEK old:%1$s(namespace, id)
                DELETE old
                WITH DISTINCT r
                MERGE (a:%2$s {namespace: r.namespace, id: r.from})
                MERGE (b:%3$s {namespace: r.namespace, id: r.to})
                CREATE (a)-[x:%1$s]->(b)
                SET x += r.props, x.namespace = r.namespace, x.id = r.id, x.version = r.version
                RETURN count(x)
                """.formatted(e.type, e.from, e.to);
    }

    /** The plain merge of a node's links. */
    private static String links(GraphModel.Element e) {
        return switch (e) {
            case PASSAGE -> """
                            WITH n, r
                            MERGE (d:Document {namespace: r.namespace, id: r.props.documentId})
                            MERGE (n)-[:PART_OF]->(d)
                            """;
            case QUESTION -> """
                            WITH n, r
                            MERGE (p:Passage {namespace: r.namespace, id: r.props.passageId})
                            MERGE (n)-[:ABOUT]->(p)
                            """;
            case ENTITY -> """
                            WITH n, r
                            FOREACH (_ IN CASE WHEN r.props.resolvedId <> r.id THEN [1] ELSE [] END |
                              MERGE (c:Entity {namespace: r.namespace, id: r.props.resolvedId})
                              MERGE (n)-[:SAME_AS]->(c))
                            """;
            case THEME -> """
                            WITH n, r
                            CALL (n, r) {
                              UNWIND r.members AS pid
                              MATCH (p:Passage {namespace: r.namespace, id: pid})
                              USING INDEX SEEK p:Passage(namespace, id)
                              MERGE (n)-[:HAS_MEMBER]->(p)
                            }
                            """;
            default -> "";
        };
    }

    @Override
    public void close() {
        driver.close();
    }
}
