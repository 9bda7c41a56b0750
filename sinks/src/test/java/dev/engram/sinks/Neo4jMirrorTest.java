package dev.engram.sinks;

import static dev.engram.sinks.MirrorRecords.HOSTILE;
import static dev.engram.sinks.MirrorRecords.delete;
import static dev.engram.sinks.MirrorRecords.document;
import static dev.engram.sinks.MirrorRecords.entity;
import static dev.engram.sinks.MirrorRecords.fact;
import static dev.engram.sinks.MirrorRecords.mention;
import static dev.engram.sinks.MirrorRecords.passage;
import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The graph mirror against a real Neo4j server (in-process, over Bolt). */
class Neo4jMirrorTest {

    private final String ns = "ns-" + UUID.randomUUID();
    private Neo4jMirror graph;

    @BeforeEach
    void connect() {
        graph = new Neo4jMirror(
                new Neo4jMirror.Settings(Neo4jServer.shared().uri(), null, null, null, Duration.ofSeconds(10)));
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
    void theSameRelationshipTwiceInOneBatchIsWrittenOnce() {
        graph.apply(List.of(fact(ns, "p1", 0, "e1", "e2", 2, 4), fact(ns, "p1", 0, "e1", "e2", 3, 4)));
        assertThat(count("MATCH ()-[f:FACT {namespace: $ns}]->() RETURN count(f)"))
                .isEqualTo(1);
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
}
