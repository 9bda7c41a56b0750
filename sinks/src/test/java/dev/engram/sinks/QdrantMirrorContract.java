package dev.engram.sinks;

import static dev.engram.sinks.MirrorRecords.delete;
import static dev.engram.sinks.MirrorRecords.entity;
import static dev.engram.sinks.MirrorRecords.passage;
import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.MirrorRecord.Kind;
import dev.engram.schemas.MirrorRecord.VectorKind;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the vector mirror must do against any Qdrant, through the official client over a real socket: run against the
 * protocol stand-in on every build ({@link QdrantMirrorTest}) and against a real Qdrant where one can be had
 * ({@link RealQdrantMirrorTest}). Every test writes collections of its own prefix.
 */
abstract class QdrantMirrorContract {

    protected String prefix;
    protected QdrantMirror vectors;

    /** A mirror over the server under test, its collections named with {@code prefix}. */
    protected abstract QdrantMirror open(String prefix) throws Exception;

    /** The names of the collections the server holds. */
    protected abstract Set<String> collections() throws Exception;

    /** Releases what {@link #open} took, and the test's collections on a shared server. */
    protected abstract void release() throws Exception;

    @BeforeEach
    void openMirror() throws Exception {
        prefix = "t" + UUID.randomUUID().toString().substring(0, 8) + "_";
        vectors = open(prefix);
    }

    @AfterEach
    void closeMirror() throws Exception {
        vectors.close();
        release();
    }

    @Test
    void writesOneCollectionPerKindOfVectorWithDeterministicIdsAndVersions() throws Exception {
        MirrorRecord p = passage("ns", "p1", "doc", 3, "text", 4);
        MirrorRecord e = entity("ns", "e1", "e1", 3, "Ada", 4);
        assertThat(vectors.apply(List.of(p, e, passage("other", "p1", "doc", 9, "x", 4))))
                .isEmpty();

        assertThat(collections()).contains(prefix + "passage", prefix + "memory", prefix + "entity");
        assertThat(collections()).noneMatch(c -> c.equals(prefix + "fact") || c.equals(prefix + "question"));
        Map<VectorKind, Map<String, Long>> held = vectors.versions("ns");
        assertThat(held.get(VectorKind.PASSAGE)).isEqualTo(Map.of("p1", 3L));
        assertThat(held.get(VectorKind.MEMORY)).isEqualTo(Map.of("p1", 3L));
        assertThat(held.get(VectorKind.ENTITY)).isEqualTo(Map.of("e1", 3L));
        assertThat(vectors.versions("other").get(VectorKind.PASSAGE)).isEqualTo(Map.of("p1", 9L));
        assertThat(vectors.points(p))
                .containsExactlyInAnyOrder(
                        prefix + "passage/" + QdrantMirror.pointId("ns", Kind.PASSAGE, "p1"),
                        prefix + "memory/" + QdrantMirror.pointId("ns", Kind.PASSAGE, "p1"));
    }

    @Test
    void anOlderVersionNeverOverwritesOrDeletesANewerOne() {
        vectors.apply(List.of(passage("ns", "p1", "doc", 5, "new", 4)));
        vectors.apply(List.of(passage("ns", "p1", "doc", 4, "old", 4), delete("ns", Kind.PASSAGE, "p1", 3)));
        assertThat(vectors.versions("ns").get(VectorKind.PASSAGE)).isEqualTo(Map.of("p1", 5L));

        vectors.apply(List.of(delete("ns", Kind.PASSAGE, "p1", 6)));
        assertThat(vectors.versions("ns").get(VectorKind.PASSAGE)).isEmpty();
        assertThat(vectors.versions("ns").get(VectorKind.MEMORY)).isEmpty();
    }

    @Test
    void aVectorQdrantRejectsIsReportedAndTheRestOfTheBatchIsWritten() {
        vectors.apply(List.of(passage("ns", "p0", "doc", 1, "first", 4)));
        MirrorRecord wrongDimension = passage("ns", "p1", "doc", 2, "bad", 3);
        MirrorRecord fine = passage("ns", "p2", "doc", 2, "good", 4);

        Map<MirrorRecord, String> rejected = vectors.apply(List.of(wrongDimension, fine));

        assertThat(rejected).containsOnlyKeys(wrongDimension);
        assertThat(rejected.get(wrongDimension)).contains("dimension");
        assertThat(vectors.versions("ns").get(VectorKind.PASSAGE)).isEqualTo(Map.of("p0", 1L, "p2", 2L));
    }

    @Test
    void undoRemovesEveryVectorOfTheObjects() {
        MirrorRecord p = passage("ns", "p1", "doc", 3, "text", 4);
        vectors.apply(List.of(p));
        vectors.undo(List.of(p));
        assertThat(vectors.versions("ns").get(VectorKind.PASSAGE)).isEmpty();
        assertThat(vectors.versions("ns").get(VectorKind.MEMORY)).isEmpty();
    }
}
