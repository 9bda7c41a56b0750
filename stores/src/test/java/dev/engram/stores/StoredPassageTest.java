package dev.engram.stores;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import java.util.List;
import org.junit.jupiter.api.Test;

class StoredPassageTest {

    private static Extraction.Entity entity(String name, EntityType type, String description) {
        return new Extraction.Entity(name, type, description, List.of(), List.of());
    }

    private static StoredPassage passage(List<Extraction.Entity> mentions, List<String> entityIds) {
        Extraction x = new Extraction("m", mentions, List.of(), List.of(), List.of(), "test", "", null);
        return new StoredPassage("ns", "d", "p", 1, 0, "h", "t", List.of(), "text", 0, 4, x, entityIds, "e");
    }

    @Test
    void mentionsMapToTheIdsMemoryStoredInOrderOfFirstMentionWhateverFunctionDerivedThem() {
        List<Extraction.Entity> mentions = List.of(
                entity("Richard Wright", EntityType.PERSON, "English painter"),
                entity("Tate", EntityType.ORGANIZATION, ""),
                entity("Wright", EntityType.PERSON, ""),
                entity("Richard Wright", EntityType.PERSON, ""),
                entity("!!!", EntityType.OTHER, ""));
        // Ids an earlier version of the sense function gave: nothing like today's derivation.
        StoredPassage p = passage(mentions, List.of("old-wright", "old-tate", "old-short"));

        assertThat(p.surfaceIdsByMention()).containsExactly("old-wright", "old-tate", "old-short", "old-wright", null);
    }

    @Test
    void storedIdsMatchTodaysDerivationForAPassageLinkedToday() {
        List<Extraction.Entity> mentions = List.of(
                entity("Richard Wright", EntityType.PERSON, "English painter (born 1960)"),
                entity("Tate", EntityType.ORGANIZATION, ""),
                entity("Richard Wright", EntityType.PERSON, ""));
        List<String> today = EntityNames.surfaceIds("ns", mentions);
        StoredPassage p = passage(mentions, today.stream().distinct().toList());

        assertThat(p.surfaceIdsByMention()).isEqualTo(today);
    }

    @Test
    void storedIdsOfAnotherPartitionAreNotGuessedAt() {
        List<Extraction.Entity> mentions =
                List.of(entity("Tate", EntityType.ORGANIZATION, ""), entity("Turner Prize", EntityType.OTHER, ""));
        StoredPassage p = passage(mentions, List.of("just-one"));

        assertThat(p.surfaceIdsByMention()).isEqualTo(EntityNames.surfaceIds("ns", mentions));
    }
}
