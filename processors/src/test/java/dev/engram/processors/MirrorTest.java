package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.DocumentStatus;
import dev.engram.schemas.MirrorRecord;
import dev.engram.stores.DocumentRecord;
import dev.engram.stores.Keys;
import dev.engram.stores.MirrorIds;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the memory step tells the mirrors about one transaction's writes. */
class MirrorTest {

    private final MemoryFixture memory = new MemoryFixture();

    private static DocumentRecord document(DocumentStatus status, Instant updatedAt) {
        return new DocumentRecord(
                MemoryFixture.NS,
                "doc",
                1,
                status,
                "T",
                "src",
                Map.of(),
                null,
                List.of(),
                0,
                updatedAt,
                null,
                List.of());
    }

    @Test
    void aDocumentIsMirroredWhenWhatTheMirrorsHoldChangesNotWhenOnlyItsStoredTimeDoes() {
        String key = Keys.of(MemoryFixture.NS, "doc");
        MemoryTransaction first = memory.begin();
        first.documents().put(key, document(DocumentStatus.PENDING, Instant.EPOCH));
        first.nextVersion();
        List<MirrorRecord> created = Mirror.stage(first);
        first.commit();
        assertThat(created).singleElement().satisfies(r -> {
            assertThat(r.kind()).isEqualTo(MirrorRecord.Kind.DOCUMENT);
            assertThat(r.version()).isEqualTo(1);
        });

        MemoryTransaction reread = memory.begin();
        reread.documents().put(key, document(DocumentStatus.PENDING, Instant.EPOCH.plusSeconds(60)));
        assertThat(Mirror.stage(reread)).isEmpty();
        reread.commit();

        MemoryTransaction verified = memory.begin();
        verified.documents().put(key, document(DocumentStatus.VERIFIED, Instant.EPOCH.plusSeconds(120)));
        verified.nextVersion();
        assertThat(Mirror.stage(verified)).singleElement().satisfies(r -> {
            assertThat(((MirrorRecord.Document) r.object()).status()).isEqualTo(DocumentStatus.VERIFIED);
            assertThat(r.version()).isEqualTo(2);
        });
        verified.commit();
        assertThat(memory.stores
                        .mirror()
                        .get(MirrorIds.key(MemoryFixture.NS, MirrorRecord.Kind.DOCUMENT, "doc"))
                        .version())
                .isEqualTo(2);
    }
}
