package dev.engram.sinks;

import dev.engram.schemas.MirrorDigest;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How memory objects look in Neo4j: documents, passages, surface entities, questions and themes are nodes keyed by
 * (namespace, id); mentions are {@code (:Passage)-[:MENTIONS]->(:Entity)} and facts {@code (:Entity)-[:FACT]->(:Entity)}
 * relationships keyed the same way; a merged surface points at its resolved entity with {@code SAME_AS}. Every element
 * carries {@code namespace}, {@code version}, {@code bucket} and {@code hash} (see {@link MirrorDigest}).
 *
 * <p>Every query is a constant with parameters: no text of an object ever becomes Cypher.
 */
final class GraphModel {

    private GraphModel() {}

    /** A kind mirrored as nodes ({@code label}) or as relationships ({@code type} from {@code from} to {@code to}). */
    enum Element {
        DOCUMENT(Kind.DOCUMENT, "Document", null, null, null),
        PASSAGE(Kind.PASSAGE, "Passage", null, null, null),
        ENTITY(Kind.ENTITY, "Entity", null, null, null),
        QUESTION(Kind.QUESTION, "Question", null, null, null),
        THEME(Kind.THEME, "Theme", null, null, null),
        MENTION(Kind.MENTION, null, "MENTIONS", "Passage", "Entity"),
        FACT(Kind.FACT, null, "FACT", "Entity", "Entity");

        final Kind kind;
        final String label;
        final String type;
        final String from;
        final String to;

        Element(Kind kind, String label, String type, String from, String to) {
            this.kind = kind;
            this.label = label;
            this.type = type;
            this.from = from;
            this.to = to;
        }

        boolean node() {
            return label != null;
        }

        static Element of(Kind kind) {
            for (Element e : values()) {
                if (e.kind == kind) {
                    return e;
                }
            }
            throw new IllegalArgumentException("no element for " + kind);
        }

        /** Writes the rows (see {@link #row}) at their versions; an element holding a newer version is left alone. */
        String upsert() {
            if (!node()) {
                return """
                        UNWIND $rows AS r
                        OPTIONAL MATCH ()-[old:%1$s {namespace: r.namespace, id: r.id}]->()
                        USING INDEX SEEK old:%1$s(namespace, id)
                        WITH r, collect(old) AS olds
                        WHERE all(o IN olds WHERE o.version <= r.version)
                        FOREACH (o IN olds | DELETE o)
                        WITH r
                        MERGE (a:%2$s {namespace: r.namespace, id: r.from})
                        MERGE (b:%3$s {namespace: r.namespace, id: r.to})
                        CREATE (a)-[x:%1$s]->(b)
                        SET x += r.props, x.namespace = r.namespace, x.id = r.id, x.version = r.version,
                            x.bucket = r.bucket, x.hash = r.hash
                        RETURN count(x) AS applied
                        """.formatted(type, from, to);
            }
            // an entity's resolved id before the write: its SAME_AS link is touched only when that changes
            String write = """
                    UNWIND $rows AS r
                    MERGE (n:%s {namespace: r.namespace, id: r.id})
                    WITH n, r, %s AS before WHERE n.version IS NULL OR n.version <= r.version
                    SET n += r.props, n.version = r.version, n.bucket = r.bucket, n.hash = r.hash
                    """.formatted(label, this == ENTITY ? "n.resolvedId" : "null");
            // links that exist already are left as they are: no write where nothing changes
            String links =
                    switch (this) {
                        case PASSAGE -> """
                                WITH n, r
                                MERGE (d:Document {namespace: r.namespace, id: r.props.documentId})
                                MERGE (n)-[p:PART_OF]->(d)
                                ON CREATE SET p.namespace = r.namespace
                                """;
                        case ENTITY -> """
                                WITH n, r, before
                                CALL (n, r, before) {
                                  // a surface without a resolved entity before has no SAME_AS: only an upsert writes
                                  // one, with the resolved id, and an undo takes both away (a placeholder node made for
                                  // a fact or a mention may have thousands of other links to walk past)
                                  WITH n WHERE before IS NOT NULL AND before <> r.props.resolvedId
                                  MATCH (n)-[s:SAME_AS]->()
                                  DELETE s
                                }
                                FOREACH (_ IN CASE WHEN r.props.resolvedId <> r.id THEN [1] ELSE [] END |
                                  MERGE (c:Entity {namespace: r.namespace, id: r.props.resolvedId})
                                  MERGE (n)-[s:SAME_AS]->(c)
                                  ON CREATE SET s.namespace = r.namespace, s.version = r.version)
                                """;
                        case QUESTION -> """
                                WITH n, r
                                MERGE (p:Passage {namespace: r.namespace, id: r.props.passageId})
                                MERGE (n)-[a:ABOUT]->(p)
                                ON CREATE SET a.namespace = r.namespace
                                """;
                        case THEME -> """
                                WITH n, r
                                CALL (n, r) {
                                  MATCH (n)-[m:HAS_MEMBER]->(p)
                                  WHERE NOT p.id IN r.members
                                  DELETE m
                                }
                                CALL (n, r) {
                                  UNWIND r.members AS pid
                                  MATCH (p:Passage {namespace: r.namespace, id: pid})
                                  USING INDEX SEEK p:Passage(namespace, id)
                                  MERGE (n)-[m:HAS_MEMBER]->(p)
                                  ON CREATE SET m.namespace = r.namespace
                                }
                                """;
                        default -> "";
                    };
            return write + links + "RETURN count(n) AS applied\n";
        }

        /** Deletes the rows' elements unless they hold a newer version than the delete. */
        String delete() {
            if (!node()) {
                return """
                        UNWIND $rows AS r
                        MATCH ()-[x:%1$s {namespace: r.namespace, id: r.id}]->()
                        USING INDEX SEEK x:%1$s(namespace, id)
                        WHERE x.version <= r.version
                        DELETE x
                        RETURN count(*) AS applied
                        """.formatted(type);
            }
            return """
                    UNWIND $rows AS r
                    MATCH (n:%1$s {namespace: r.namespace, id: r.id})
                    USING INDEX SEEK n:%1$s(namespace, id)
                    WHERE n.version IS NULL OR n.version <= r.version
                    DETACH DELETE n
                    RETURN count(*) AS applied
                    """.formatted(label);
        }

        /**
         * Takes back the rows' elements unless a newer version is there: the undo of a write the other mirror rejected. A node
         * becomes a bare placeholder (key only, no version: it no longer counts as mirrored) so that relationships
         * memory still holds keep their endpoint; a relationship is deleted.
         */
        String undo() {
            return node() ? """
                    UNWIND $rows AS r MATCH (n:%1$s {namespace: r.namespace, id: r.id})
                    USING INDEX SEEK n:%1$s(namespace, id)
                    WHERE n.version IS NULL OR n.version <= r.version
                    SET n = {namespace: r.namespace, id: r.id}
                    WITH n
                    CALL (n) {
                      MATCH (n)-[link:SAME_AS|PART_OF|ABOUT|HAS_MEMBER]->()
                      DELETE link
                    }
                    """.formatted(label) : """
                    UNWIND $rows AS r MATCH ()-[x:%1$s {namespace: r.namespace, id: r.id}]->()
                    USING INDEX SEEK x:%1$s(namespace, id)
                    WHERE x.version <= r.version
                    DELETE x
                    """.formatted(type);
        }

        /** Records the Qdrant points of the rows' elements (the reference write-back) at the version written. */
        String writeBack() {
            return node() ? """
                    UNWIND $rows AS r
                    MATCH (n:%1$s {namespace: r.namespace, id: r.id})
                    USING INDEX SEEK n:%1$s(namespace, id)
                    WHERE n.version = r.version
                    SET n.qdrantPoints = r.points
                    """.formatted(label) : """
                    UNWIND $rows AS r
                    MATCH ()-[x:%1$s {namespace: r.namespace, id: r.id}]->()
                    USING INDEX SEEK x:%1$s(namespace, id)
                    WHERE x.version = r.version
                    SET x.qdrantPoints = r.points
                    """.formatted(type);
        }

        /** Per bucket: how many elements of a namespace, and the sum of their hashes. */
        String digest() {
            return node() ? """
                    MATCH (n:%s {namespace: $namespace}) WHERE n.version IS NOT NULL
                    RETURN n.bucket AS bucket, count(*) AS count, sum(n.hash) AS sum
                    """.formatted(label) : """
                    MATCH ()-[x:%s {namespace: $namespace}]->()
                    RETURN x.bucket AS bucket, count(*) AS count, sum(x.hash) AS sum
                    """.formatted(type);
        }

        /** The (id, version) of a namespace's elements in some buckets. */
        String versions() {
            return node() ? """
                    MATCH (n:%s {namespace: $namespace})
                    WHERE n.version IS NOT NULL AND n.bucket IN $buckets
                    RETURN n.id AS id, n.version AS version
                    """.formatted(label) : """
                    MATCH ()-[x:%s {namespace: $namespace}]->() WHERE x.bucket IN $buckets
                    RETURN x.id AS id, x.version AS version
                    """.formatted(type);
        }

        /** The name of the index (for nodes: of the constraint and the index behind it) on (namespace, id). */
        String schemaName() {
            return "engram_%s_key".formatted(name().toLowerCase(Locale.ROOT));
        }

        /** The constraint or index that keys this element by (namespace, id). */
        String schema() {
            return node()
                    ? "CREATE CONSTRAINT %s IF NOT EXISTS FOR (n:%s) REQUIRE (n.namespace, n.id) IS UNIQUE"
                            .formatted(schemaName(), label)
                    : "CREATE INDEX %s IF NOT EXISTS FOR ()-[x:%s]-() ON (x.namespace, x.id)"
                            .formatted(schemaName(), type);
        }
    }

    /** The parameters of one record: key, version, digest parts and the object's properties. */
    static Map<String, Object> row(MirrorRecord r) {
        Map<String, Object> row = new HashMap<>();
        row.put("namespace", r.namespace());
        row.put("id", r.id());
        row.put("version", r.version());
        row.put("bucket", MirrorDigest.bucket(r.id()));
        row.put("hash", MirrorDigest.hash(r.id(), r.version()));
        if (r.object() == null) {
            return row;
        }
        Map<String, Object> props = new HashMap<>();
        props.put("updatedAt", r.at() == null ? null : r.at().toString());
        switch (r.object()) {
            case MirrorRecord.Document d -> {
                props.put("title", d.title());
                props.put("source", d.source());
                props.put("status", d.status() == null ? null : d.status().name());
                props.put("documentVersion", d.documentVersion());
                props.put(
                        "eventTime",
                        d.eventTime() == null ? null : d.eventTime().toString());
                props.put("passages", d.passages());
                props.put("present", d.present());
            }
            case MirrorRecord.Passage p -> {
                props.put("documentId", p.documentId());
                props.put("documentVersion", p.documentVersion());
                props.put("ordinal", p.ordinal());
                props.put("title", p.title());
                props.put("headings", p.headings());
                props.put("text", p.text());
                props.put("memory", p.memory());
                props.put("start", p.start());
                props.put("end", p.end());
                props.put("contentHash", p.contentHash());
                props.put("extractor", p.extractor());
                props.put("embedder", p.embedder());
            }
            case MirrorRecord.Entity e -> {
                props.put("name", e.name());
                props.put("type", e.type() == null ? null : e.type().name());
                props.put("description", e.description());
                props.put("aliases", e.aliases());
                props.put("forms", e.forms());
                props.put("resolvedId", e.resolvedId());
                props.put("mentions", e.mentions());
                props.put("passages", e.passages());
            }
            case MirrorRecord.Mention m -> {
                row.put("from", m.passageId());
                row.put("to", m.entityId());
                props.put("documentId", m.documentId());
                props.put("form", m.form());
                props.put("description", m.description());
                props.put("spanStarts", m.spans().stream().map(s -> s.start()).toList());
                props.put("spanEnds", m.spans().stream().map(s -> s.end()).toList());
                props.put("evidence", m.evidence());
                props.put("extractor", m.extractor());
            }
            case MirrorRecord.Fact f -> {
                row.put("from", f.headId());
                row.put("to", f.tailId());
                props.put("passageId", f.passageId());
                props.put("documentId", f.documentId());
                props.put("relation", f.relation());
                props.put("head", f.head());
                props.put("tail", f.tail());
                props.put("evidence", f.evidence());
                props.put("confidence", f.confidence());
            }
            case MirrorRecord.Question q -> {
                props.put("passageId", q.passageId());
                props.put("documentId", q.documentId());
                props.put("text", q.text());
            }
            case MirrorRecord.Theme t -> {
                props.put("rank", t.rank());
                props.put("eigenvalue", t.eigenvalue());
                props.put("summary", t.summary());
                props.put("members", t.passageIds());
                row.put("members", t.passageIds());
            }
        }
        row.put("props", props);
        return row;
    }

    /** The records of one element and op in a batch, written by one UNWIND. */
    record Run(Element element, boolean delete, List<MirrorRecord> records) {}
}
