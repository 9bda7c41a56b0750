package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import dev.engram.schemas.EntityType;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.Span;
import java.util.List;
import org.junit.jupiter.api.Test;

class VerifierTest {

    private static final String TEXT = "Ada Lovelace wrote Note G. Lovelace met Charles Babbage in 1833.";

    private static Extraction.Entity entity(String name, EntityType type, List<String> aliases, Span... spans) {
        return new Extraction.Entity(name, type, "", aliases, List.of(spans));
    }

    private static Extraction extraction(List<Extraction.Entity> entities, List<Extraction.Fact> facts) {
        return new Extraction(TEXT, entities, facts, List.of(), List.of(), "test/1", null, null);
    }

    @Test
    void acceptsAnchoredEntitiesAndFactsBetweenThem() {
        Extraction x = extraction(
                List.of(
                        entity(
                                "Ada Lovelace",
                                EntityType.PERSON,
                                List.of("Lovelace"),
                                new Span(0, 12),
                                new Span(27, 35)),
                        entity("Note G", EntityType.WORK, List.of(), new Span(19, 25))),
                List.of(new Extraction.Fact("Ada Lovelace", "wrote", "Note G", new Span(0, 25), 0.9)));

        Verifier.Verified v = Verifier.verify(TEXT, x);

        assertThat(v.entities()).containsExactly(0, 1);
        assertThat(v.facts()).containsExactly(0);
        assertThat(v.rejections()).isEmpty();
    }

    @Test
    void rejectsEvidenceThePassageDoesNotShow() {
        Extraction x = extraction(
                List.of(
                        entity("Ada Lovelace", EntityType.PERSON, List.of(), new Span(0, 12)),
                        entity("Mary Shelley", EntityType.PERSON, List.of(), new Span(0, 12)),
                        entity("Percy Shelley", EntityType.PERSON, List.of()),
                        entity("Note G", EntityType.WORK, List.of(), new Span(500, 506))),
                List.of(
                        new Extraction.Fact("Ada Lovelace", "", "Note G", new Span(0, 20), 0.9),
                        new Extraction.Fact("Ada Lovelace", "admired", "Mary Shelley", new Span(0, 20), 0.9),
                        new Extraction.Fact("Ada Lovelace", "wrote", "Ada Lovelace", new Span(0, 20), 0.9)));

        Verifier.Verified v = Verifier.verify(TEXT, x);

        assertThat(v.entities()).containsExactly(0);
        assertThat(v.facts()).isEmpty();
        assertThat(v.rejections())
                .extracting(Verifier.Rejection::subject, Verifier.Rejection::reason)
                .contains(
                        tuple("Mary Shelley", "evidence span does not show the entity"),
                        tuple("Percy Shelley", "no evidence span in the passage"),
                        tuple("Note G", "evidence span does not show the entity"),
                        tuple("Ada Lovelace  Note G", "incomplete fact"));
    }

    @Test
    void theQualityGateStopsJunkNames() {
        assertThat(Verifier.quality(entity("x", EntityType.OTHER, List.of()))).isEqualTo("name too short");
        assertThat(Verifier.quality(entity("f(x) = y;", EntityType.OTHER, List.of())))
                .isEqualTo("looks like code");
        assertThat(Verifier.quality(entity("E = mc2", EntityType.OTHER, List.of())))
                .isEqualTo("looks like a formula");
        assertThat(Verifier.quality(entity("Wow!!!???", EntityType.OTHER, List.of())))
                .isEqualTo("punctuation flood");
        assertThat(Verifier.quality(entity("Ab\u0001\u0002\u0003", EntityType.OTHER, List.of())))
                .isEqualTo("too few printable characters");
        assertThat(Verifier.quality(entity("Introduction", EntityType.OTHER, List.of())))
                .isEqualTo("generic heading");
        assertThat(Verifier.quality(entity("Xkcdqwrt Zzzzzz", EntityType.OTHER, List.of())))
                .isEqualTo("garbled text");
        assertThat(Verifier.quality(entity(
                        "the committee then decided that all members would vote on the new rules.",
                        EntityType.OTHER,
                        List.of())))
                .isEqualTo("sentence fragment");
        assertThat(Verifier.quality(entity("University of Cambridge", EntityType.ORGANIZATION, List.of())))
                .isNull();
        assertThat(Verifier.quality(entity("3,500", EntityType.NUMBER, List.of())))
                .isNull();
        assertThat(Verifier.quality(entity("7", EntityType.NUMBER, List.of()))).isNull();
        assertThat(Verifier.quality(entity("AT&T", EntityType.ORGANIZATION, List.of())))
                .isNull();
    }
}
