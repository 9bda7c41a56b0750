package dev.engram.sinks;

import static dev.engram.sinks.MirrorRecords.HOSTILE;
import static dev.engram.sinks.MirrorRecords.delete;
import static dev.engram.sinks.MirrorRecords.document;
import static dev.engram.sinks.MirrorRecords.entity;
import static dev.engram.sinks.MirrorRecords.fact;
import static dev.engram.sinks.MirrorRecords.mention;
import static dev.engram.sinks.MirrorRecords.passage;
import static dev.engram.sinks.MirrorRecords.theme;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;
import org.neo4j.driver.Session;
import org.neo4j.driver.summary.Plan;

/** The graph mirror against a real Neo4j server (in-process, over Bolt). */
class Neo4jMirrorTest {

    /**
     * Generous: no test here is about the timeout, and a first write to a cold server on a loaded machine (the
     * server's code not yet compiled, its schema being made) has taken more than ten seconds.
     */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final String ns = "ns-" + UUID.randomUUID();
    private Neo4jMirror graph;

    @BeforeEach
    void connect() {
        graph = new Neo4jMirror(new Neo4jMirror.Settings(Neo4jServer.shared().uri(), null, null, null, TIMEOUT));
        graph.ensureSchema();
    }

    @AfterEach
    void close() {
        graph.close();
    }

    private long count(String query) {
        return graph.read(query, Map.of("ns", ns)).get(0).get(0).asLong();
    }

    @Test
    void writesDocumentsPassagesEntitiesMentionsAndFactsAsAGraph() {
        graph.apply(List.of(
                document(ns, "doc", 1, "T"),
                passage(ns, "p1", "doc", 2, "Ada knew Charles.", 4),
                entity(ns, "e1", "e1", 2, "Ada", 4),
                entity(ns, "e2", "e2", 2, "Charles", 4),
                entity(ns, "e3", "e1", 2, "Ada Lovelace", 4),
                mention(ns, "p1", "e1", 2),
                fact(ns, "p1", 0, "e1", "e2", 2, 4)));

        assertThat(count("MATCH (p:Passage {namespace: $ns})-[:PART_OF]->(:Document {namespace: $ns}) RETURN count(p)"))
                .isEqualTo(1);
        assertThat(count("MATCH (:Passage {namespace: $ns})-[m:MENTIONS {namespace: $ns}]->(:Entity) RETURN count(m)"))
                .isEqualTo(1);
        assertThat(count("MATCH (:Entity {namespace: $ns, id: 'e1'})-[f:FACT {relation: 'knew'}]->"
                        + "(:Entity {namespace: $ns, id: 'e2'}) RETURN count(f)"))
                .isEqualTo(1);
        assertThat(count("MATCH (:Entity {namespace: $ns, id: 'e3'})-[:SAME_AS]->(:Entity {namespace: $ns, id: 'e1'}) "
                        + "RETURN count(*)"))
                .isEqualTo(1);
        // every node and relationship carries its namespace
        assertThat(count("MATCH (n) WHERE n.namespace = $ns AND n.version IS NULL RETURN count(n)"))
                .isZero();
        assertThat(count("MATCH ()-[r]->() WHERE startNode(r).namespace = $ns AND r.namespace IS NULL RETURN count(r)"))
                .isZero();
    }

    @Test
    void linksFollowMergesUnmergesAndThemeMembersExactly() {
        graph.apply(List.of(
                document(ns, "doc", 1, "T"),
                passage(ns, "p1", "doc", 1, "one", 4),
                passage(ns, "p2", "doc", 1, "two", 4),
                passage(ns, "p3", "doc", 1, "three", 4),
                entity(ns, "e1", "e1", 1, "Ada", 4),
                entity(ns, "e2", "e2", 1, "Lovelace", 4),
                entity(ns, "e3", "e1", 1, "Ada Lovelace", 4),
                theme(ns, "t0", 1, "p1", "p2")));
        assertThat(sameAs("e3")).containsExactly("e1");
        assertThat(members("t0")).containsExactly("p1", "p2");

        graph.apply(List.of(entity(ns, "e3", "e1", 2, "Ada Lovelace", 4), theme(ns, "t0", 2, "p2", "p3")));
        assertThat(sameAs("e3"))
                .as("an update that keeps the merge keeps one link")
                .containsExactly("e1");
        assertThat(members("t0")).containsExactly("p2", "p3");

        graph.apply(List.of(entity(ns, "e3", "e2", 3, "Ada Lovelace", 4)));
        assertThat(sameAs("e3")).as("merged into another entity").containsExactly("e2");
        graph.apply(List.of(entity(ns, "e3", "e3", 4, "Ada Lovelace", 4), theme(ns, "t0", 4)));
        assertThat(sameAs("e3")).as("unmerged").isEmpty();
        assertThat(members("t0")).isEmpty();

        MirrorRecord merged = entity(ns, "e3", "e1", 5, "Ada Lovelace", 4);
        graph.apply(List.of(merged));
        graph.undo(List.of(merged));
        assertThat(sameAs("e3"))
                .as("a surface taken back is a bare placeholder: it no longer stands for an entity")
                .isEmpty();
        MirrorRecord grouped = theme(ns, "t0", 5, "p1");
        graph.apply(List.of(grouped));
        graph.undo(List.of(grouped));
        assertThat(members("t0")).isEmpty();
        graph.apply(List.of(grouped));
        assertThat(members("t0")).as("written again after the undo").containsExactly("p1");
        graph.apply(List.of(entity(ns, "e3", "e2", 6, "Ada Lovelace", 4)));
        assertThat(sameAs("e3")).as("rewritten after an undo").containsExactly("e2");
    }

    private List<String> sameAs(String entity) {
        return graph
                .read(
                        "MATCH (:Entity {namespace: $ns, id: $id})-[:SAME_AS]->(c) RETURN c.id ORDER BY c.id",
                        Map.of("ns", ns, "id", entity))
                .stream()
                .map(r -> r.get(0).asString())
                .toList();
    }

    private List<String> members(String theme) {
        return graph
                .read(
                        "MATCH (:Theme {namespace: $ns, id: $id})-[m:HAS_MEMBER]->(p) RETURN p.id ORDER BY p.id",
                        Map.of("ns", ns, "id", theme))
                .stream()
                .map(r -> r.get(0).asString())
                .toList();
    }

    @Test
    void theSameRelationshipTwiceInOneBatchIsWrittenOnce() {
        graph.apply(List.of(fact(ns, "p1", 0, "e1", "e2", 2, 4), fact(ns, "p1", 0, "e1", "e2", 3, 4)));
        assertThat(count("MATCH ()-[f:FACT {namespace: $ns}]->() RETURN count(f)"))
                .isEqualTo(1);
    }

    @Test
    void twoNamespacesWithTheSameIdsInOneBatchAreBothWritten() {
        String other = "other-" + ns;
        long applied = graph.apply(List.of(
                document(ns, "doc-1", 1, "mine"),
                passage(ns, "p1", "doc-1", 1, "one", 4),
                entity(ns, "e1", "e1", 1, "Ada", 4),
                entity(ns, "e2", "e2", 1, "Charles", 4),
                fact(ns, "p1", 0, "e1", "e2", 1, 4),
                theme(ns, "theme-1", 1, "p1"),
                document(other, "doc-1", 1, "theirs"),
                passage(other, "p1", "doc-1", 1, "uno", 4),
                entity(other, "e1", "e1", 1, "Grace", 4),
                entity(other, "e2", "e2", 1, "Howard", 4),
                fact(other, "p1", 0, "e1", "e2", 1, 4),
                theme(other, "theme-1", 1, "p1")));

        assertThat(applied).isEqualTo(12);
        for (String namespace : List.of(ns, other)) {
            Map<String, Object> p = Map.of("ns", namespace);
            assertThat(graph.read("MATCH (n {namespace: $ns}) RETURN count(n)", p)
                            .get(0)
                            .get(0)
                            .asLong())
                    .as("nodes of %s", namespace)
                    .isEqualTo(5);
            assertThat(graph.read("MATCH ()-[f:FACT {namespace: $ns}]->() RETURN count(f)", p)
                            .get(0)
                            .get(0)
                            .asLong())
                    .isEqualTo(1);
            assertThat(graph.read("MATCH (:Theme {namespace: $ns})-[m:HAS_MEMBER]->() RETURN count(m)", p)
                            .get(0)
                            .get(0)
                            .asLong())
                    .isEqualTo(1);
        }
        assertThat(graph.read("MATCH (d:Document {namespace: $ns}) RETURN d.title", Map.of("ns", other))
                        .get(0)
                        .get(0)
                        .asString())
                .isEqualTo("theirs");
        graph.apply(List.of(delete(ns, Kind.DOCUMENT, "doc-1", 2), delete(other, Kind.DOCUMENT, "doc-1", 2)));
        assertThat(count("MATCH (d:Document {namespace: $ns}) RETURN count(d)")).isZero();
        assertThat(graph.read("MATCH (d:Document {namespace: $ns}) RETURN count(d)", Map.of("ns", other))
                        .get(0)
                        .get(0)
                        .asLong())
                .isZero();
    }

    @Test
    void hostileTextLandsAsData() {
        graph.apply(List.of(document(ns, "doc", 1, HOSTILE), passage(ns, "p1", "doc", 1, HOSTILE, 4)));

        assertThat(graph.read("MATCH (d:Document {namespace: $ns, id: 'doc'}) RETURN d.title", Map.of("ns", ns))
                        .get(0)
                        .get(0)
                        .asString())
                .isEqualTo(HOSTILE);
        assertThat(count("MATCH (n {namespace: $ns}) RETURN count(n)")).isEqualTo(2);
    }

    @Test
    void anOlderVersionNeverOverwritesOrDeletesANewerOne() {
        graph.apply(List.of(document(ns, "doc", 5, "new"), fact(ns, "p1", 0, "e1", "e2", 5, 4)));
        long applied = graph.apply(List.of(
                document(ns, "doc", 4, "old"),
                fact(ns, "p1", 0, "e2", "e1", 4, 4),
                delete(ns, Kind.DOCUMENT, "doc", 3),
                delete(ns, Kind.FACT, "p1/f/0", 3)));

        assertThat(applied).isZero();
        assertThat(graph.read("MATCH (d:Document {namespace: $ns}) RETURN d.title", Map.of("ns", ns))
                        .get(0)
                        .get(0)
                        .asString())
                .isEqualTo("new");
        assertThat(count("MATCH (:Entity {id: 'e1'})-[f:FACT {namespace: $ns}]->(:Entity {id: 'e2'}) RETURN count(f)"))
                .isEqualTo(1);

        graph.apply(List.of(fact(ns, "p1", 0, "e2", "e1", 6, 4), delete(ns, Kind.DOCUMENT, "doc", 7)));
        assertThat(count("MATCH ()-[f:FACT {namespace: $ns}]->() RETURN count(f)"))
                .isEqualTo(1);
        assertThat(count("MATCH (:Entity {id: 'e2'})-[f:FACT {namespace: $ns}]->(:Entity {id: 'e1'}) RETURN count(f)"))
                .as("a fact whose endpoints changed moves")
                .isEqualTo(1);
        assertThat(count("MATCH (d:Document {namespace: $ns}) RETURN count(d)")).isZero();
    }

    @Test
    void thePositionMovesInTheSameTransactionAsTheBatch() {
        String group = "g-" + ns;
        assertThat(graph.position(group, "t", 0)).isEqualTo(Neo4jMirror.Position.NONE);
        graph.apply(List.of(document(ns, "doc", 1, "T")), group, "t", 0, 11);
        assertThat(graph.position(group, "t", 0)).isEqualTo(new Neo4jMirror.Position(11, -1));
        MirrorRecord p = passage(ns, "p1", "doc", 2, "text", 4);
        graph.apply(List.of(p), group, "t", 0, 12);
        graph.writeBack(Map.of(p, List.of("passage/abc", "memory/abc")), group, "t", 0, 12);
        assertThat(graph.position(group, "t", 0)).isEqualTo(new Neo4jMirror.Position(12, 12));
        assertThat(graph.read("MATCH (p:Passage {namespace: $ns}) RETURN p.qdrantPoints", Map.of("ns", ns))
                        .get(0)
                        .get(0)
                        .asList())
                .containsExactly("passage/abc", "memory/abc");
    }

    @Test
    void digestsAgreeWithTheVersionsWrittenAndUndoRemovesWhatever() {
        MirrorRecord p1 = passage(ns, "p1", "doc", 3, "one", 4);
        MirrorRecord p2 = passage(ns, "p2", "doc", 4, "two", 4);
        MirrorRecord m = mention(ns, "p1", "e1", 4);
        graph.apply(List.of(document(ns, "doc", 2, "T"), p1, p2, entity(ns, "e1", "e1", 4, "Ada", 4), m));

        Map<Kind, Map<Integer, Digests.Bucket>> digests = graph.digests(ns);
        assertThat(digests.get(Kind.PASSAGE)).isEqualTo(Digests.of(Map.of("p1", 3L, "p2", 4L)));
        assertThat(digests.get(Kind.MENTION)).isEqualTo(Digests.of(Map.of("p1|e1", 4L)));
        assertThat(graph.versions(ns, Kind.PASSAGE, digests.get(Kind.PASSAGE).keySet()))
                .isEqualTo(Map.of("p1", 3L, "p2", 4L));

        graph.undo(List.of(p1, m));
        assertThat(graph.digests(ns).get(Kind.PASSAGE)).isEqualTo(Digests.of(Map.of("p2", 4L)));
        assertThat(graph.digests(ns).get(Kind.MENTION)).isEmpty();
        assertThat(count("MATCH (p:Passage {namespace: $ns, id: 'p1'}) WHERE p.text IS NULL RETURN count(p)"))
                .as("an undone node is a bare placeholder until it is written again")
                .isEqualTo(1);
        graph.apply(List.of(p1));
        assertThat(graph.digests(ns).get(Kind.PASSAGE)).isEqualTo(Digests.of(Map.of("p1", 3L, "p2", 4L)));
    }

    /**
     * A batch is written as a few statements, deletes first and then upserts by kind; on histories like memory's —
     * an element's endpoints exist whenever it does — that ends exactly where writing record by record ends, nodes,
     * relationships, links and placeholders alike, however the stream is cut into batches.
     */
    @Test
    void batchesEndWhereRecordByRecordWritingEnds() {
        for (long seed = 1; seed <= 3; seed++) {
            Random random = new Random(seed);
            List<Function<String, MirrorRecord>> history = history(random, 120);
            String one = ns + "-one-" + seed;
            String batched = ns + "-batched-" + seed;
            for (Function<String, MirrorRecord> r : history) {
                graph.apply(List.of(r.apply(one)));
            }
            for (int i = 0; i < history.size(); ) {
                int n = 1 + random.nextInt(40);
                graph.apply(history.subList(i, Math.min(history.size(), i + n)).stream()
                        .map(r -> r.apply(batched))
                        .toList());
                i += n;
            }
            assertThat(graphOf(batched)).as("seed %d", seed).isEqualTo(graphOf(one));
            assertThat(graphOf(one)).hasSizeGreaterThan(8);
        }
    }

    /** Every node and relationship of a namespace, without the namespace: kind, key, version, endpoints. */
    private Set<String> graphOf(String namespace) {
        Set<String> out = new TreeSet<>();
        graph.read(
                        "MATCH (n {namespace: $ns}) RETURN labels(n)[0] + ' ' + n.id + ' v' + coalesce(n.version, -1)",
                        Map.of("ns", namespace))
                .forEach(r -> out.add(r.get(0).asString()));
        graph.read(
                        "MATCH (a)-[x {namespace: $ns}]->(b) RETURN type(x) + ' ' + coalesce(x.id, '') + ' v'"
                                + " + coalesce(x.version, -1) + ' ' + a.id + '->' + b.id",
                        Map.of("ns", namespace))
                .forEach(r -> out.add(r.get(0).asString()));
        return out;
    }

    /**
     * A random history as memory writes one: documents and their passages come and go, entities appear with their
     * first mention and leave with their last, facts join live entities, surfaces merge and unmerge; the records of
     * one change come in random order.
     */
    private static List<Function<String, MirrorRecord>> history(Random random, int changes) {
        List<Function<String, MirrorRecord>> out = new ArrayList<>();
        Map<String, String> passages = new LinkedHashMap<>(); // passage -> document
        Map<String, String> entities = new LinkedHashMap<>(); // entity -> resolved
        Set<String> mentions = new LinkedHashSet<>(); // passage|entity
        Map<String, String[]> facts = new LinkedHashMap<>(); // id -> passage, head, tail
        long version = 0;
        int next = 0;
        for (int c = 0; c < changes; c++) {
            long v = ++version;
            List<Function<String, MirrorRecord>> change = new ArrayList<>();
            int op = random.nextInt(6);
            if (op == 0 || passages.isEmpty()) { // a passage of a document, mentioning a new or known entity
                String doc = "d" + random.nextInt(3);
                String p = "p" + next++;
                passages.put(p, doc);
                change.add(n -> document(n, doc, v, "T"));
                change.add(n -> passage(n, p, doc, v, "text " + p, 4));
                String e = entities.isEmpty() || random.nextBoolean() ? "e" + next++ : pick(random, entities.keySet());
                if (!entities.containsKey(e)) {
                    entities.put(e, e);
                }
                String resolved = entities.get(e);
                change.add(n -> entity(n, e, resolved, v, "name " + e, 4));
                mentions.add(p + "|" + e);
                change.add(n -> mention(n, p, e, v));
            } else if (op == 1) { // a passage goes, with its mentions and facts, and entities left without mentions
                String p = pick(random, passages.keySet());
                passages.remove(p);
                change.add(n -> delete(n, Kind.PASSAGE, p, v));
                for (String m : List.copyOf(mentions)) {
                    if (m.startsWith(p + "|")) {
                        mentions.remove(m);
                        change.add(n -> delete(n, Kind.MENTION, m, v));
                    }
                }
                facts.entrySet().removeIf(f -> {
                    if (f.getValue()[0].equals(p)) {
                        change.add(n -> delete(n, Kind.FACT, f.getKey(), v));
                        return true;
                    }
                    return false;
                });
                for (String e : List.copyOf(entities.keySet())) {
                    boolean used = mentions.stream().anyMatch(m -> m.endsWith("|" + e))
                            || facts.values().stream().anyMatch(f -> f[1].equals(e) || f[2].equals(e))
                            || entities.entrySet().stream()
                                    .anyMatch(x -> !x.getKey().equals(e)
                                            && x.getValue().equals(e));
                    if (!used) {
                        entities.remove(e);
                        change.add(n -> delete(n, Kind.ENTITY, e, v));
                    }
                }
            } else if (op == 2) { // another mention of a known entity
                String p = pick(random, passages.keySet());
                String e = pick(random, entities.keySet());
                if (mentions.add(p + "|" + e)) {
                    change.add(n -> mention(n, p, e, v));
                }
            } else if (op == 3 && entities.size() > 1) { // a fact between two live entities of a passage
                String p = pick(random, passages.keySet());
                String head = pick(random, entities.keySet());
                String tail = pick(random, entities.keySet());
                int i = next++;
                facts.put(p + "/f/" + i, new String[] {p, head, tail});
                change.add(n -> fact(n, p, i, head, tail, v, 4));
            } else if (op == 4 && entities.size() > 1) { // a surface merges into another, or is split out again
                String e = pick(random, entities.keySet());
                String into = entities.get(e).equals(e) ? pick(random, entities.keySet()) : e;
                boolean isTarget = entities.values().stream().filter(e::equals).count() > 1;
                if (!isTarget && entities.get(into).equals(into)) {
                    entities.put(e, into);
                    change.add(n -> entity(n, e, into, v, "name " + e, 4));
                }
            } else { // a passage is understood again
                String p = pick(random, passages.keySet());
                String doc = passages.get(p);
                change.add(n -> passage(n, p, doc, v, "new text " + v, 4));
            }
            Collections.shuffle(change, random);
            out.addAll(change);
        }
        return out;
    }

    private static String pick(Random random, Collection<String> from) {
        return List.copyOf(from).get(random.nextInt(from.size()));
    }

    /**
     * Every write finds what it touches through the (namespace, id) key, whatever the statistics say. A planner that
     * meets an empty database (a new mirror) may otherwise plan a scan of all relationships of a type, and keep that
     * plan while the type grows: each batch then costs in proportion to everything written so far.
     */
    @Test
    void everyWriteLooksItsElementsUpByKey() {
        try (Driver driver = GraphDatabase.driver(Neo4jServer.shared().uri(), AuthTokens.none());
                Session s = driver.session()) {
            for (GraphModel.Element e : GraphModel.Element.values()) {
                for (String query : List.of(e.upsert(), e.delete(), e.undo(), e.writeBack())) {
                    Plan plan = s.run("EXPLAIN " + query, Map.of("rows", List.of()))
                            .consume()
                            .plan();
                    List<String> operators = new ArrayList<>();
                    operators(plan, operators);
                    assertThat(operators)
                            .as("%s: %s", e, query)
                            .noneMatch(o -> o.contains("Scan") || o.contains("CartesianProduct"))
                            .anyMatch(o -> o.contains("IndexSeek") || o.startsWith("MergeUniqueNode"));
                }
            }
        }
    }

    /**
     * A write whose index is gone (an operator dropped it) fails on its hint ({@code Neo.ClientError.Schema.IndexNotFound}).
     * That is no rejection of the data: the sink must pause and retry rather than compensate every record, and it
     * writes again once the index is back.
     */
    @Test
    void aMissingIndexIsNoRejectionOfTheData() {
        graph.apply(List.of(
                document(ns, "doc", 1, "T"),
                passage(ns, "p1", "doc", 2, "Ada.", 4),
                entity(ns, "e1", "e1", 2, "Ada", 4)));
        try (Driver driver = GraphDatabase.driver(Neo4jServer.shared().uri(), AuthTokens.none());
                Session s = driver.session()) {
            s.run("DROP INDEX " + GraphModel.Element.MENTION.schemaName()).consume();
            try {
                assertThatThrownBy(() -> graph.apply(List.of(mention(ns, "p1", "e1", 3))))
                        .satisfies(e ->
                                assertThat(SinkFailure.permanent(e)).as("%s", e).isFalse());
            } finally {
                graph.ensureSchema();
            }
        }
        graph.apply(List.of(mention(ns, "p1", "e1", 3)));
        assertThat(count("MATCH (:Passage {namespace: $ns})-[m:MENTIONS]->(:Entity) RETURN count(m)"))
                .isEqualTo(1);
    }

    private static void operators(Plan plan, List<String> out) {
        out.add(plan.operatorType());
        plan.children().forEach(c -> operators(c, out));
    }
}
