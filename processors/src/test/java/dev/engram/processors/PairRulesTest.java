package dev.engram.processors;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.EntityType;
import dev.engram.stores.EntityNames;
import dev.engram.stores.PairDecision;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PairRulesTest {

    /** A lookup where every short form is unambiguous and the two surfaces share a co-mentioned person. */
    private static final PairRules.Lookup UNAMBIGUOUS_WITH_CONTEXT = lookup(1, SharedContext.mentionedWith("X"));

    private static final PairRules.Lookup UNAMBIGUOUS_NO_CONTEXT = lookup(1, SharedContext.NONE);

    private static PairRules.Lookup lookup(int ambiguity, SharedContext context) {
        return new PairRules.Lookup() {
            @Override
            public int ambiguity(PairRules.Surface shortSide, PairRules.ShortForm family) {
                return ambiguity;
            }

            @Override
            public SharedContext shared(PairRules.Surface a, PairRules.Surface b) {
                return context;
            }

            @Override
            public int referents(PairRules.Surface bare) {
                return 1;
            }
        };
    }

    private static PairRules.Surface surface(String written, EntityType type, String... aliases) {
        return new PairRules.Surface(
                EntityNames.surfaceId("ns", written, type),
                EntityNames.normalize(written),
                written,
                type,
                Set.of(aliases),
                Set.of(),
                null);
    }

    private static PairRules.Surface described(String written, EntityType type, String description) {
        return new PairRules.Surface(
                EntityNames.surfaceId("ns", written, type, description),
                NameForms.parse(EntityNames.normalize(written), written),
                type,
                Set.of(),
                Set.of(),
                null,
                description);
    }

    /** A lookup where a bare name has this many described referents, with this shared context. */
    private static PairRules.Lookup referents(int referents, SharedContext context) {
        return new PairRules.Lookup() {
            @Override
            public int ambiguity(PairRules.Surface shortSide, PairRules.ShortForm family) {
                return 1;
            }

            @Override
            public SharedContext shared(PairRules.Surface a, PairRules.Surface b) {
                return context;
            }

            @Override
            public int referents(PairRules.Surface bare) {
                return referents;
            }
        };
    }

    @Test
    void oneNameWithDescriptionsThatConflictIsTwoReferentsUnlessOneDocumentHoldsBoth() {
        PairRules.Surface footballer = described("Richard Wright", EntityType.PERSON, "English footballer");
        PairRules.Surface author = described("Richard Wright", EntityType.PERSON, "American author");
        PairRules.Surface keeper = described("Richard Wright", EntityType.PERSON, "English goalkeeper and footballer");

        assertThat(decide(footballer, author, referents(2, SharedContext.NONE)))
                .get()
                .satisfies(d -> {
                    assertThat(d.decision()).isEqualTo(PairDecision.Kind.SPLIT);
                    assertThat(d.rule()).isEqualTo("namesake");
                    assertThat(d.evidence()).anySatisfy(e -> assertThat(e).contains("different qualifiers"));
                });
        assertThat(decide(footballer, keeper, referents(2, SharedContext.NONE)))
                .get()
                .extracting(PairRules.Decision::decision, PairRules.Decision::rule)
                .containsExactly(PairDecision.Kind.MERGE, "same_name");
        assertThat(decide(footballer, author, referents(2, SharedContext.inDocument("d1"))))
                .get()
                .extracting(PairRules.Decision::decision)
                .isEqualTo(PairDecision.Kind.MERGE);
    }

    @Test
    void aBareNameJoinsADescribedReferentItSharesContextWithAndWaitsForReviewOtherwise() {
        PairRules.Surface bare = surface("Richard Wright", EntityType.PERSON);
        PairRules.Surface author = described("Richard Wright", EntityType.PERSON, "American author");

        assertThat(decide(bare, author, referents(1, SharedContext.NONE)))
                .as("even the only described referent: the bare mention may be an undescribed namesake")
                .get()
                .satisfies(d -> {
                    assertThat(d.decision()).isEqualTo(PairDecision.Kind.REVIEW);
                    assertThat(d.rule()).isEqualTo("ambiguous_name");
                    assertThat(d.evidence()).anySatisfy(e -> assertThat(e).contains("not a namesake"));
                });
        assertThat(decide(bare, author, referents(1, SharedContext.alikePassages(0.91))))
                .get()
                .extracting(PairRules.Decision::decision, PairRules.Decision::rule)
                .containsExactly(PairDecision.Kind.MERGE, "same_name");
        assertThat(decide(author, bare, referents(2, SharedContext.NONE))).get().satisfies(d -> {
            assertThat(d.decision()).isEqualTo(PairDecision.Kind.REVIEW);
            assertThat(d.rule()).isEqualTo("ambiguous_name");
            assertThat(d.evidence()).anySatisfy(e -> assertThat(e).contains("2 described referents"));
        });
        assertThat(decide(bare, author, referents(2, SharedContext.mentionedWith("Native Son"))))
                .get()
                .extracting(PairRules.Decision::decision)
                .isEqualTo(PairDecision.Kind.MERGE);
        assertThat(decide(
                        bare, described("Richard Wright", EntityType.PLACE, "town"), referents(1, SharedContext.NONE)))
                .as("types still decide first")
                .get()
                .extracting(PairRules.Decision::rule)
                .isEqualTo("type_conflict");
    }

    private static Optional<PairRules.Decision> decide(
            PairRules.Surface a, PairRules.Surface b, PairRules.Lookup lookup) {
        return PairRules.decide(a, b, lookup);
    }

    @Test
    void spellingVariantsOfOneTypeMerge() {
        var d = decide(
                surface("St. Louis", EntityType.PLACE),
                surface("Saint Louis", EntityType.PLACE),
                UNAMBIGUOUS_NO_CONTEXT);
        assertThat(d).hasValueSatisfying(x -> {
            assertThat(x.decision()).isEqualTo(PairDecision.Kind.MERGE);
            assertThat(x.rule()).isEqualTo("variant");
        });
        assertThat(decide(
                        surface("Apple Inc.", EntityType.ORGANIZATION),
                        surface("Apple", EntityType.ORGANIZATION),
                        UNAMBIGUOUS_NO_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.decision()).isEqualTo(PairDecision.Kind.MERGE));
    }

    @Test
    void theSameNameWithConflictingTypesGoesToReview() {
        var d = decide(
                surface("Washington", EntityType.PERSON),
                surface("Washington", EntityType.PLACE),
                UNAMBIGUOUS_WITH_CONTEXT);
        assertThat(d).hasValueSatisfying(x -> {
            assertThat(x.decision()).isEqualTo(PairDecision.Kind.REVIEW);
            assertThat(x.rule()).isEqualTo("type_conflict");
        });
    }

    @Test
    void aOneWordNameOfUnknownTypeJoinsATypedOneOnlyWithSharedContext() {
        var untyped = surface("Washington", EntityType.OTHER);
        var place = surface("Washington", EntityType.PLACE);

        assertThat(decide(untyped, place, UNAMBIGUOUS_NO_CONTEXT)).hasValueSatisfying(x -> {
            assertThat(x.decision()).isEqualTo(PairDecision.Kind.REVIEW);
            assertThat(x.rule()).isEqualTo("untyped_name");
        });
        assertThat(decide(untyped, place, UNAMBIGUOUS_WITH_CONTEXT)).hasValueSatisfying(x -> {
            assertThat(x.decision()).isEqualTo(PairDecision.Kind.MERGE);
            assertThat(x.evidence()).contains("both mentioned with \"X\"");
        });
        // a longer name is seldom two things of different kinds
        assertThat(decide(
                        surface("Václav Havel", EntityType.OTHER),
                        surface("Václav Havel", EntityType.PERSON),
                        UNAMBIGUOUS_NO_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.decision()).isEqualTo(PairDecision.Kind.MERGE));
    }

    @Test
    void thePartsOfAnIdentifierAreNotItsNames() {
        assertThat(PairRules.identifier("SASL_PLAINTEXT")).isTrue();
        assertThat(PairRules.identifier("log.retention.ms")).isTrue();
        assertThat(PairRules.identifier("St. Louis")).isFalse();
        assertThat(PairRules.identifier("Node.js")).isFalse();
        assertThat(PairRules.identifier("Amazon.com")).isFalse();
        assertThat(PairRules.identifier("3.5")).isFalse();
        assertThat(decide(
                        surface("PLAINTEXT", EntityType.OTHER),
                        surface("SASL_PLAINTEXT", EntityType.OTHER),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .isEmpty();
        assertThat(decide(
                        surface("retention.ms", EntityType.OTHER),
                        surface("log.retention.ms", EntityType.OTHER),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .isEmpty();
        // a part the extractor declared an alias still is one
        assertThat(decide(
                        surface("PLAINTEXT", EntityType.OTHER),
                        surface("SASL_PLAINTEXT", EntityType.OTHER, "plaintext"),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.decision()).isEqualTo(PairDecision.Kind.MERGE));
    }

    @Test
    void anAcronymMergesOnlyWhenItHasOneExpansion() {
        var cnn = surface("CNN", EntityType.OTHER);
        var network = surface("Convolutional Neural Network", EntityType.OTHER);
        assertThat(decide(cnn, network, UNAMBIGUOUS_NO_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.rule()).isEqualTo("acronym"));
        assertThat(decide(cnn, network, lookup(2, SharedContext.NONE)))
                .hasValueSatisfying(x -> assertThat(x.decision()).isEqualTo(PairDecision.Kind.REVIEW));
        // A lower-case word is not an acronym.
        assertThat(decide(surface("Cnn", EntityType.OTHER), network, UNAMBIGUOUS_NO_CONTEXT))
                .isEmpty();
    }

    @Test
    void aSurnameNeedsContextAndIsNeverAPlace() {
        var obama = surface("Obama", EntityType.PERSON);
        var barack = surface("Barack Obama", EntityType.PERSON);
        assertThat(decide(obama, barack, UNAMBIGUOUS_NO_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.decision()).isEqualTo(PairDecision.Kind.DEFER));
        assertThat(decide(obama, barack, UNAMBIGUOUS_WITH_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.decision()).isEqualTo(PairDecision.Kind.MERGE));
        // Even when an extractor declared the surname an alias, it stays a partial name that needs context.
        assertThat(decide(obama, surface("Barack Obama", EntityType.PERSON, "obama"), UNAMBIGUOUS_NO_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.decision()).isEqualTo(PairDecision.Kind.DEFER));
        assertThat(decide(
                        surface("Paris", EntityType.PLACE),
                        surface("Paris Texas", EntityType.PLACE),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .isEmpty();
    }

    @Test
    void aPartOfANameEndsWhereTheNameEnds() {
        assertThat(decide(
                        surface("Streams", EntityType.OTHER),
                        surface("Kafka Streams", EntityType.OTHER),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.rule()).isEqualTo("partial_name"));
        assertThat(decide(
                        surface("Houston", EntityType.ORGANIZATION),
                        surface("Houston Astros", EntityType.ORGANIZATION),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .as("a modifier of the name, not its head")
                .isEmpty();
        assertThat(decide(
                        surface("ZooKeeper", EntityType.OTHER),
                        surface("ZooKeeper Security Migration Tool", EntityType.OTHER),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .isEmpty();
        assertThat(decide(
                        surface("Sara", EntityType.PERSON),
                        surface("Sara Bareilles", EntityType.PERSON),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .as("a first name alone")
                .isEmpty();
        assertThat(decide(
                        surface("Dwight Eisenhower", EntityType.PERSON),
                        surface("Dwight D. Eisenhower", EntityType.PERSON),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .hasValueSatisfying(x -> assertThat(x.decision()).isEqualTo(PairDecision.Kind.MERGE));
    }

    @Test
    void fathersSonsAndNumberedThingsStayApart() {
        assertThat(decide(
                        surface("Joseph Smith", EntityType.PERSON),
                        surface("Joseph Smith Sr.", EntityType.PERSON),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .isEmpty();
        assertThat(decide(
                        surface("World War I", EntityType.OTHER),
                        surface("World War II", EntityType.OTHER),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .isEmpty();
        assertThat(decide(
                        surface("Apollo 11", EntityType.OTHER),
                        surface("Apollo 13", EntityType.OTHER),
                        UNAMBIGUOUS_WITH_CONTEXT))
                .isEmpty();
        assertThat(NameForms.numbers("henry viii")).containsExactly(8);
        assertThat(NameForms.numbers("jet li")).isEmpty();
    }

    @Test
    void peopleWithAlikeNamesMergeOnlyWithEvidence() {
        var a = surface("Pyotr Tchaikovsky", EntityType.PERSON);
        var b = surface("Pyotr Tchaikowsky", EntityType.PERSON);
        assertThat(decide(a, b, UNAMBIGUOUS_NO_CONTEXT)).hasValueSatisfying(x -> {
            assertThat(x.decision()).isEqualTo(PairDecision.Kind.REVIEW);
            assertThat(x.rule()).isEqualTo("similar_name");
        });
        assertThat(decide(a, b, UNAMBIGUOUS_WITH_CONTEXT)).hasValueSatisfying(x -> {
            assertThat(x.decision()).isEqualTo(PairDecision.Kind.MERGE);
            assertThat(x.rule()).isEqualTo("fuzzy");
        });
    }

    @Test
    void nonContiguousPartsAreOnlyMiddleInitialsUnlessPeople() {
        assertThat(NameForms.partOf("ernest e bryan", "ernest bryan", false)).isTrue();
        assertThat(NameForms.partOf("world class championship wrestling", "world championship wrestling", false))
                .isFalse();
        assertThat(NameForms.partOf("james alan hetfield", "james hetfield", true))
                .isTrue();
        assertThat(NameForms.loose(EntityNames.normalize("The Beatles"))).isEqualTo(NameForms.loose("beatles"));
        assertThat(NameForms.initials("bank of america")).contains("ba", "boa");
        assertThat(NameForms.asAcronym("u s", "U.S.")).isEqualTo("us");
    }

    @Test
    void whereNoConstraintDecidesTheScoreDoesAndSaysSo() {
        MergeModel always = new MergeModel("always", 50, Map.of(), Map.of());
        MergeModel never = new MergeModel("never", -50, Map.of(), Map.of());
        PairRules.Surface babbage = surface("Babbage", EntityType.PERSON);
        PairRules.Surface charles = surface("Charles Babbage", EntityType.PERSON);

        Optional<PairRules.Decision> merged = PairRules.decide(babbage, charles, UNAMBIGUOUS_WITH_CONTEXT, always);
        assertThat(merged).get().satisfies(d -> {
            assertThat(d.decision()).isEqualTo(PairDecision.Kind.MERGE);
            assertThat(d.rule()).isEqualTo("partial_name");
            assertThat(d.score()).isGreaterThan(0.99);
            assertThat(d.features()).containsEntry("partial", 1.0).containsEntry("co_mentioned", 1 / 3.0);
            assertThat(d.evidence()).anySatisfy(e -> assertThat(e).contains("merge score 1.000 at or above 0.90"));
        });
        assertThat(PairRules.decide(babbage, charles, UNAMBIGUOUS_WITH_CONTEXT, never))
                .as("what the rules alone would merge goes to review below the score")
                .get()
                .satisfies(d -> {
                    assertThat(d.decision()).isEqualTo(PairDecision.Kind.REVIEW);
                    assertThat(d.evidence()).anySatisfy(e -> assertThat(e).contains("below 0.90 (never)"));
                });
        assertThat(PairRules.decide(babbage, charles, UNAMBIGUOUS_NO_CONTEXT, always))
                .as("nothing beyond the name: the score cannot merge it")
                .get()
                .satisfies(d -> {
                    assertThat(d.decision()).isEqualTo(PairDecision.Kind.DEFER);
                    assertThat(d.evidence()).anySatisfy(e -> assertThat(e).contains("nothing beyond the name"));
                });
        assertThat(PairRules.decide(
                        surface("NATO", EntityType.ORGANIZATION),
                        surface("North Atlantic Treaty Organization", EntityType.ORGANIZATION),
                        UNAMBIGUOUS_NO_CONTEXT,
                        always))
                .get()
                .extracting(PairRules.Decision::decision)
                .isEqualTo(PairDecision.Kind.MERGE);
    }

    @Test
    void constraintsStandWhateverTheScore() {
        MergeModel always = new MergeModel("always", 50, Map.of(), Map.of());
        PairRules.Surface footballer = described("Richard Wright", EntityType.PERSON, "English footballer");
        PairRules.Surface author = described("Richard Wright", EntityType.PERSON, "American author");
        assertThat(PairRules.decide(footballer, author, referents(2, SharedContext.mentionedWith("X")), always))
                .get()
                .satisfies(d -> {
                    assertThat(d.decision()).isEqualTo(PairDecision.Kind.SPLIT);
                    assertThat(d.features())
                            .as("a constraint decided, not the score")
                            .isEmpty();
                });
        assertThat(PairRules.decide(
                        surface("Washington", EntityType.PERSON),
                        surface("Washington", EntityType.PLACE),
                        UNAMBIGUOUS_WITH_CONTEXT,
                        always))
                .get()
                .extracting(PairRules.Decision::decision)
                .isEqualTo(PairDecision.Kind.REVIEW);
        assertThat(PairRules.decide(
                        surface("Smith", EntityType.PERSON),
                        surface("John Smith", EntityType.PERSON),
                        lookup(2, SharedContext.mentionedWith("X")),
                        always))
                .as("a short name that could stand for two")
                .get()
                .extracting(PairRules.Decision::rule)
                .isEqualTo("ambiguous");
    }

    @Test
    void withTheRulesAloneTheFeaturesAreShownAndTheRulesDecide() {
        PairRules.Surface babbage = surface("Babbage", EntityType.PERSON);
        PairRules.Surface charles = surface("Charles Babbage", EntityType.PERSON);
        assertThat(PairRules.decide(babbage, charles, UNAMBIGUOUS_WITH_CONTEXT))
                .get()
                .satisfies(d -> {
                    assertThat(d.decision()).isEqualTo(PairDecision.Kind.MERGE);
                    assertThat(d.score()).isEqualTo(0.8);
                    assertThat(d.features()).containsKeys(MergeFeatures.NAMES.toArray(String[]::new));
                });
    }

    @Test
    void aSharedSessionIsTheSameFeatureAsASharedDocumentButNotOneDocument() {
        PairRules.Surface mel = surface("Mel", EntityType.PERSON);
        PairRules.Surface melanie = surface("Melanie", EntityType.PERSON);
        Map<String, Double> session =
                MergeFeatures.of(mel, melanie, lookup(1, new SharedContext(null, "session-3", List.of(), 0, 0)));
        assertThat(session).containsEntry("same_document", 1.0).containsEntry(MergeFeatures.ONE_DOCUMENT, 0.0);
        Map<String, Double> document =
                MergeFeatures.of(mel, melanie, lookup(1, new SharedContext("doc-1", null, List.of(), 0, 0)));
        assertThat(document).containsEntry("same_document", 1.0).containsEntry(MergeFeatures.ONE_DOCUMENT, 1.0);
        assertThat(MergeFeatures.of(mel, melanie, UNAMBIGUOUS_NO_CONTEXT))
                .containsEntry("same_document", 0.0)
                .containsEntry(MergeFeatures.ONE_DOCUMENT, 0.0);
        assertThat(MergeFeatures.NAMES).doesNotContain(MergeFeatures.ONE_DOCUMENT, "same_session");
    }
}
