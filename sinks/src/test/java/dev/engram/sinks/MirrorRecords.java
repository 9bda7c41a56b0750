package dev.engram.sinks;

import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.EntityType;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.Span;
import java.time.Instant;
import java.util.List;

/** Mirror records for the sink tests, as the memory step writes them. */
final class MirrorRecords {

    static final Instant AT = Instant.parse("2026-01-02T03:04:05Z");
    static final String HOSTILE = "X'}) DETACH DELETE n // \" \\u0000 <script> 名前 🙂";

    private MirrorRecords() {}

    static float[] vector(int dim, float seed) {
        float[] v = new float[dim];
        v[0] = 1;
        v[dim - 1] = seed;
        return v;
    }

    static MirrorRecord document(String ns, String id, long version, String title) {
        return MirrorRecord.upsert(
                ns, id, version, AT, new MirrorRecord.Document(title, "src", DocumentStatus.VERIFIED, 1, AT, 1, 1));
    }

    static MirrorRecord passage(String ns, String id, String doc, long version, String text, int dim) {
        return MirrorRecord.upsert(
                ns,
                id,
                version,
                AT,
                new MirrorRecord.Passage(
                        doc,
                        1,
                        0,
                        "T",
                        List.of("H"),
                        text,
                        "memory of " + text,
                        0,
                        text.length(),
                        "h",
                        "x/1",
                        "m",
                        vector(dim, version),
                        vector(dim, -version)));
    }

    static MirrorRecord entity(String ns, String id, String resolved, long version, String name, int dim) {
        return MirrorRecord.upsert(
                ns,
                id,
                version,
                AT,
                new MirrorRecord.Entity(
                        name, EntityType.PERSON, "d", List.of("a"), List.of(name), resolved, 1, 1, vector(dim, 0.5f)));
    }

    static MirrorRecord theme(String ns, String id, long version, String... passages) {
        return MirrorRecord.upsert(ns, id, version, AT, new MirrorRecord.Theme(0, 1.0, List.of(passages), "summary"));
    }

    static MirrorRecord mention(String ns, String passage, String entity, long version) {
        return MirrorRecord.upsert(
                ns,
                passage + "|" + entity,
                version,
                AT,
                new MirrorRecord.Mention(
                        passage, entity, "doc", "Ada", "", List.of(new Span(0, 3)), List.of("Ada"), "x"));
    }

    static MirrorRecord fact(String ns, String passage, int i, String head, String tail, long version, int dim) {
        return MirrorRecord.upsert(
                ns,
                passage + "/f/" + i,
                version,
                AT,
                new MirrorRecord.Fact(
                        passage, "doc", head, "knew", tail, "Ada", "Charles", "Ada knew Charles", 0.9, vector(dim, i)));
    }

    static MirrorRecord delete(String ns, MirrorRecord.Kind kind, String id, long version) {
        return MirrorRecord.delete(ns, kind, id, version, AT);
    }
}
