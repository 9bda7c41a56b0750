package dev.engram.retrieval;

import static dev.engram.retrieval.TestVectors.unit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.engram.schemas.EntityType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/**
 * The modes on a small hand-built graph, whose vectors are chosen so that the right answer is known: passage 0 is
 * what the query looks like, passage 1 is the second hop (it shares the bridge entity with passage 0 but not the
 * query's words or direction), passages 2 and 3 are distractors.
 */
class RetrievalModesTest {

    private static final float[] QUERY = unit(1, 0, 0);

    /** The paper's path of a guarded graph mode, whatever the question's support (see {@link GuardedMode}). */
    private static final Map<String, Double> PAPER_PATH = Map.of("min_support", 0.0, "with_dense", 0.0);

    private static MemoryGraph graph() {
        return graph(null);
    }

    /** The graph, with a vector for the bridge entity Swapan Saha when {@code sahaVector} is given. */
    private static MemoryGraph graph(float[] sahaVector) {
        MemoryGraphBuilder b = MemoryGraph.builder(7);
        int p0 = b.passage(passage("p0", "Agni", "Agni is a 2004 film directed by Swapan Saha."), unit(0.9f, 0.1f, 0));
        int p1 = b.passage(passage("p1", "Swapan Saha", "Swapan Saha was born on 10 January 1930."), unit(0, 0.2f, 1));
        int p2 = b.passage(passage("p2", "Rivers", "Rivers flood in spring."), unit(0.3f, 1, 0));
        b.passage(passage("p3", "Markets", "Markets sell spices and copper."), unit(0.2f, 0, 1));
        int agni = b.entity("e-agni", "Agni");
        int saha = b.entity("e-saha", "Swapan Saha");
        if (sahaVector != null) {
            b.entityVector(saha, sahaVector);
        }
        int date = b.entity("e-1930", "10 January 1930");
        int spring = b.entity("e-spring", "spring");
        b.link(agni, p0);
        b.link(saha, p0);
        b.link(saha, p1);
        b.link(date, p1);
        b.link(spring, p2);
        b.fact("Agni directed by Swapan Saha", p0, agni, saha, 0.9, unit(1, 0, 0.1f));
        b.fact("Swapan Saha born on 10 January 1930", p1, saha, date, 0.9, unit(0.1f, 0, 1));
        b.fact("Rivers flood in spring", p2, -1, spring, 0.5, unit(0, 1, 0));
        return b.build();
    }

    private static Passage passage(String id, String title, String text) {
        return new Passage(id, "doc-" + id, title, List.of(), text, text, 0, text.length());
    }

    /** GEM-RAG's own ranking, without the dense one fused in. */
    private static final Map<String, Double> GEM_ALONE = Map.of("with_dense", 0.0);

    private static List<String> run(String mode, String query, Map<String, Double> params, int... entities) {
        Retrieval.Mode m = Retrieval.mode(mode);
        MemoryGraph g = graph();
        Retrieval.Result r = m.retrieve(
                g, Retrieval.Query.of(query, QUERY, t -> QUERY).withEntities(entities), Retrieval.params(m, params), 4);
        return r.ranked().stream().map(s -> g.passage(s.passage()).id()).toList();
    }

    @Test
    void gemTakesNodesBestFirstByTheirUtilityQuestionsAndThemesBringTheirMembers() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int p0 = b.passage(passage("p0", "A", "a"), unit(0, 1, 0));
        int p1 = b.passage(passage("p1", "B", "b"), unit(0, 0, 1));
        int p2 = b.passage(passage("p2", "C", "c"), unit(0, 1, 1));
        b.passage(passage("p3", "D", "d"), unit(0.5f, 0.5f, 0)); // no questions: its own vector stands in
        b.questions(p0, List.of(unit(0.2f, 1, 0)));
        b.questions(p1, List.of(unit(1, 0, 0.1f), unit(0, 0, 1))); // its first question matches the query best
        b.questions(p2, List.of(unit(0, 1, 1)));
        MemoryGraph g = b.build();
        Retrieval.Mode gem = Retrieval.mode("gem");
        Retrieval.Result r =
                gem.retrieve(g, Retrieval.Query.of("q", QUERY, t -> QUERY), Retrieval.params(gem, GEM_ALONE), 2);
        assertThat(r.ranked()).extracting(s -> g.passage(s.passage()).id()).containsExactly("p1", "p3");
        assertThat(r.explanation()).containsKey("best_question");

        // A theme whose questions lean to the query brings its members along, strongest first.
        MemoryGraphBuilder t = MemoryGraph.builder(2);
        int a = t.passage(passage("a", "A", "a"), unit(0.6f, 0.8f, 0));
        int c = t.passage(passage("c", "C", "c"), unit(0.6f, 0, 0.8f));
        int d = t.passage(passage("d", "D", "d"), unit(0, 1, 0));
        t.questions(a, List.of(unit(0.6f, 0.8f, 0)));
        t.questions(c, List.of(unit(0.6f, 0, 0.8f)));
        t.questions(d, List.of(unit(0, 1, 0)));
        t.theme(1, 1.0, new int[] {c, a}, "summary");
        MemoryGraph tg = t.build();
        Retrieval.Result withTheme =
                gem.retrieve(tg, Retrieval.Query.of("q", QUERY, x -> QUERY), Retrieval.params(gem, GEM_ALONE), 2);
        assertThat(withTheme.ranked())
                .extracting(s -> tg.passage(s.passage()).id())
                .containsExactly("c", "a");
        Retrieval.Result without = gem.retrieve(
                tg,
                Retrieval.Query.of("q", QUERY, x -> QUERY),
                Retrieval.params(gem, Map.of("themes", 0.0, "with_dense", 0.0)),
                2);
        assertThat(without.explanation().get("theme_nodes")).isEqualTo(0);
    }

    @Test
    void comoWithAgentsProbesUntilItCanAnswer() {
        List<String> calls = new ArrayList<>();
        Retrieval.Reasoner agents = new Retrieval.Reasoner() {
            @Override
            public List<String> probe(String question, List<String> past, List<String> cues, int n) {
                calls.add("probe " + past.size() + " " + cues.size());
                return List.of("When was Swapan Saha born?", question); // a repeat of the question is dropped
            }

            @Override
            public String cue(String question, String probe, List<String> evidence) {
                calls.add("cue " + probe);
                return "Key Finding: " + evidence.get(0);
            }

            @Override
            public String fuse(String question, List<String> cues) {
                calls.add("fuse " + cues.size());
                return String.join(" ", cues);
            }

            @Override
            public String tryAnswer(String question, List<String> evidence, String history) {
                calls.add("answer");
                return evidence.stream().anyMatch(e -> e.contains("1930")) && !history.isEmpty()
                        ? "10 January 1930"
                        : null;
            }
        };
        Retrieval.Mode como = Retrieval.mode("como");
        MemoryGraph g = graph();
        Retrieval.Result r = como.retrieve(
                g,
                Retrieval.Query.of("When was the director of Agni born?", QUERY, t -> unit(0, 0.2f, 1))
                        .withReasoner(agents),
                Retrieval.params(como, Map.of()),
                3);

        assertThat(r.explanation().get("answer")).isEqualTo("10 January 1930");
        assertThat(calls)
                .containsExactly(
                        "answer",
                        "cue When was the director of Agni born?",
                        "probe 1 1",
                        "cue When was Swapan Saha born?",
                        "fuse 1",
                        "answer");
        assertThat(r.ranked()).extracting(s -> g.passage(s.passage()).id()).contains("p1");
    }

    @Test
    void comoNeverShowsAnLlmAPassageThatLeftMemorySinceTheSnapshot() {
        List<String> seen = new ArrayList<>();
        Retrieval.Reasoner agents = new Retrieval.Reasoner() {
            @Override
            public List<String> probe(String question, List<String> past, List<String> cues, int n) {
                return List.of("When was Swapan Saha born?");
            }

            @Override
            public String cue(String question, String probe, List<String> evidence) {
                seen.addAll(evidence);
                return "cue";
            }

            @Override
            public String fuse(String question, List<String> cues) {
                return "history";
            }

            @Override
            public String tryAnswer(String question, List<String> evidence, String history) {
                seen.addAll(evidence);
                return null;
            }
        };
        MemoryGraph g = graph();
        int deleted = -1;
        for (int i = 0; i < g.passageCount(); i++) {
            if (g.passage(i).id().equals("p1")) {
                deleted = i;
            }
        }
        int gone = deleted;
        Retrieval.Mode como = Retrieval.mode("como");
        como.retrieve(
                g,
                Retrieval.Query.of("When was the director of Agni born?", QUERY, t -> unit(0, 0.2f, 1))
                        .withReasoner(agents)
                        .withLive(passage -> passage != gone),
                Retrieval.params(como, Map.of()),
                3);

        assertThat(seen).isNotEmpty().noneMatch(e -> e.contains("1930"));
    }

    @Test
    void denseRanksByCosine() {
        assertThat(run("dense", "director of Agni", Map.of())).startsWith("p0", "p2");
    }

    @Test
    void bm25RanksByTermsAndIgnoresPassagesWithoutThem() {
        List<String> ranked = run("bm25", "when was Swapan Saha born", Map.of());
        assertThat(ranked.get(0)).isEqualTo("p1");
        assertThat(ranked.get(1)).isEqualTo("p0");
    }

    /** The passages sharing no word come after those that do, at 0 and in passage order, as a scan of all ranks them. */
    @Test
    void bm25RanksExactlyAsEveryPassagesScoreDoes() {
        MemoryGraph g = graph();
        Retrieval.Mode bm25 = Retrieval.mode("bm25");
        for (String query : List.of("when was Swapan Saha born", "copper", "nothing matches", "", "Agni Agni film")) {
            for (int topK : new int[] {1, 2, 4, 10}) {
                Retrieval.Result r = bm25.retrieve(
                        g, Retrieval.Query.of(query, QUERY, t -> QUERY), Retrieval.params(bm25, Map.of()), topK);
                assertThat(r.ranked())
                        .as("%s, top %d", query, topK)
                        .isEqualTo(Retrieval.ranked(g.bm25.scores(query), topK));
            }
        }
    }

    /** Queries on one snapshot reuse its per-unit arrays: what one query wrote never reaches the next. */
    @Test
    void pabdAnswersTheSameWhateverRanBeforeItOnTheSnapshot() {
        Retrieval.Mode pabd = Retrieval.mode("pabd");
        List<String> queries =
                List.of("When was the director of Agni born?", "copper spices", "Swapan Saha", "rivers in spring");
        MemoryGraph shared = graph();
        for (int round = 0; round < 2; round++) {
            for (String query : queries) {
                Retrieval.Result fresh = pabd.retrieve(
                        graph(), Retrieval.Query.of(query, QUERY, t -> QUERY), Retrieval.params(pabd, Map.of()), 4);
                Retrieval.Result reused = pabd.retrieve(
                        shared, Retrieval.Query.of(query, QUERY, t -> QUERY), Retrieval.params(pabd, Map.of()), 4);
                assertThat(reused.ranked()).as(query).isEqualTo(fresh.ranked());
                assertThat(reused.explanation()).as(query).isEqualTo(fresh.explanation());
            }
        }
    }

    @Test
    void cogitoDiffusionBringsTheSecondHopAboveDistractors() {
        // the paper's ranking alone (by default the dense one is fused with it)
        List<String> ranked = run("cogito", "When was the director of Agni born?", Map.of("with_dense", 0.0), 0);

        assertThat(ranked.subList(0, 2)).containsExactlyInAnyOrder("p0", "p1");
    }

    @Test
    void cogitoExplainsItsSeedsAndFallsBackToCosineWithoutActivation() {
        Retrieval.Mode m = Retrieval.mode("cogito");
        MemoryGraph g = graph();
        Retrieval.Result r = m.retrieve(
                g, Retrieval.Query.of("director of Agni", QUERY, t -> QUERY), Retrieval.params(m, PAPER_PATH), 3);
        assertThat(r.explanation()).containsKeys("seed_facts", "seed_entities", "diffusion_pushes", "candidates");

        Retrieval.Result none = m.retrieve(
                g,
                Retrieval.Query.of("x", QUERY, t -> QUERY),
                Retrieval.params(m, Map.of("top_facts", 0.0, "min_support", 0.0)),
                3);
        assertThat(none.explanation()).containsKey("fallback");
        assertThat(none.ranked().get(0).passage()).isZero();
    }

    /** Cogito reuses its arrays over all nodes from query to query of a snapshot: nothing of one may reach the next. */
    @Test
    void cogitoAnswersTheSameWhateverTheSnapshotAnsweredBefore() {
        Retrieval.Mode m = Retrieval.mode("cogito");
        Retrieval.Params defaults = Retrieval.params(m, Map.of());
        Retrieval.Query first = Retrieval.Query.of("When was the director of Agni born?", QUERY, t -> QUERY);
        Retrieval.Result fresh = m.retrieve(graph(), first, defaults, 3);
        MemoryGraph used = graph();
        for (int round = 0; round < 3; round++) {
            m.retrieve(used, Retrieval.Query.of("director of Agni", QUERY, t -> QUERY), defaults, 3);
            m.retrieve(
                    used, Retrieval.Query.of("x", QUERY, t -> QUERY), Retrieval.params(m, Map.of("top_facts", 0.0)), 3);
            Retrieval.Result again = m.retrieve(used, first, defaults, 3);
            assertThat(again.ranked()).isEqualTo(fresh.ranked());
            assertThat(again.explanation()).isEqualTo(fresh.explanation());
        }
    }

    @Test
    void localPushConvergesToTheRandomWalkWithRestart() {
        MemoryGraph g = graph();
        int n = g.entityCount() + g.passageCount();
        double[] pi0 = new double[n];
        pi0[0] = 0.7; // Agni
        pi0[1] = 0.3; // Swapan Saha
        double restart = 0.5;

        double[] pushed = CogitoMode.push(g, pi0, restart, 1e-12, new HashMap<>());

        double[] pi = pi0.clone();
        for (int it = 0; it < 200; it++) {
            double[] next = new double[n];
            for (int e = 0; e < g.entityCount(); e++) {
                for (int passage : g.entityPassages[e]) {
                    next[g.entityCount() + passage] += pi[e] / g.entityPassages[e].length;
                }
            }
            for (int passage = 0; passage < g.passageCount(); passage++) {
                for (int e : g.passageEntities[passage]) {
                    next[e] += pi[g.entityCount() + passage] / g.passageEntities[passage].length;
                }
            }
            for (int i = 0; i < n; i++) {
                next[i] = (1 - restart) * next[i] + restart * pi0[i];
            }
            pi = next;
        }
        for (int i = 0; i < n; i++) {
            assertThat(pushed[i]).as("node " + i).isCloseTo(pi[i], Offset.offset(1e-9));
        }

        // a push out of its work budget stops, says so, and has spread less than the whole diffusion
        Map<String, Object> explain = new HashMap<>();
        double[] stopped = CogitoMode.push(g, pi0, restart, 1e-12, 3, explain);
        assertThat(explain).containsKey("diffusion_stopped");
        double total = 0;
        for (int i = 0; i < n; i++) {
            assertThat(stopped[i]).as("node " + i).isLessThanOrEqualTo(pi[i] + 1e-12);
            total += stopped[i];
        }
        assertThat(total).isLessThan(Arrays.stream(pi).sum() - 1e-6);
    }

    @Test
    void fusionFallsBackToTheVectorRankingWhenTheGraphIsOutOfTime() {
        Retrieval.Mode m = Retrieval.mode("fusion");
        MemoryGraph g = graph();
        Retrieval.Result r = m.retrieve(
                g,
                Retrieval.Query.of("q", QUERY, t -> QUERY),
                Retrieval.params(m, Map.of("timeout_ms", 0.0, "min_support", 0.0)),
                3);

        assertThat(r.explanation()).containsKey("fallback");
        assertThat(r.ranked()).extracting(Retrieval.Scored::passage).containsExactly(0, 2, 3);
    }

    @Test
    void fusionRanksGraphNeighboursOfTheSeedsIntoTheResult() {
        List<String> ranked = run("fusion", "q", Map.of("seed_passages", 1.0, "min_support", 0.0, "with_dense", 0.0));
        assertThat(ranked.subList(0, 2)).contains("p0", "p1");
    }

    @Test
    void pabdDiffusesFromAnchorsThroughTheHypergraphToTheSecondHop() {
        Retrieval.Mode m = Retrieval.mode("pabd");
        MemoryGraph g = graph();
        Retrieval.Result r = m.retrieve(
                g,
                Retrieval.Query.of("Agni directed by Swapan Saha", QUERY, t -> QUERY),
                Retrieval.params(m, PAPER_PATH),
                4);

        List<String> ranked =
                r.ranked().stream().map(s -> g.passage(s.passage()).id()).toList();
        assertThat(ranked.subList(0, 2)).containsExactlyInAnyOrder("p0", "p1");
        assertThat(r.explanation()).containsKeys("anchors", "diffusion_iterations", "top_units", "window_chunks");
        assertThat(ranked).hasSize(4);
    }

    @Test
    void aGuardedGraphModeRanksByMeaningWhereTheQuestionNamesNothingSpecific() {
        MemoryGraph g = graph();
        Retrieval.Mode dense = Retrieval.mode("dense");
        List<Retrieval.Scored> byMeaning = dense.retrieve(
                        g, Retrieval.Query.of("q", QUERY, t -> QUERY), Retrieval.params(dense, Map.of()), 4)
                .ranked();
        for (String mode : List.of("cogito", "pabd", "fusion")) {
            Retrieval.Mode m = Retrieval.mode(mode);
            // no entity named: the dense ranking, said so
            Retrieval.Result none =
                    m.retrieve(g, Retrieval.Query.of("q", QUERY, t -> QUERY), Retrieval.params(m, Map.of()), 4);
            assertThat(none.ranked()).as(mode).isEqualTo(byMeaning);
            assertThat(none.explanation())
                    .as(mode)
                    .containsEntry("path", "dense")
                    .containsEntry("anchor_support", 0.0)
                    .containsEntry("why", "the question names no entity of the graph");
            // Swapan Saha is in half the passages: 1 - ln 2 / ln 4 = 0.5, below the default 0.95
            Retrieval.Result common = m.retrieve(
                    g,
                    Retrieval.Query.of("q", QUERY, t -> QUERY).withEntities(new int[] {1}),
                    Retrieval.params(m, Map.of()),
                    4);
            assertThat(common.explanation()).as(mode).containsEntry("path", "dense");
            assertThat((double) common.explanation().get("anchor_support")).isCloseTo(0.5, Offset.offset(1e-9));
            assertThat((String) common.explanation().get("why")).contains("too common");
            // Agni is in one passage: support 1, the paper's path
            Retrieval.Result anchored = m.retrieve(
                    g,
                    Retrieval.Query.of("q", QUERY, t -> QUERY).withEntities(new int[] {0}),
                    Retrieval.params(m, Map.of()),
                    4);
            // with the dense ranking fused in (each of the three does by default), alone with with_dense 0
            assertThat(anchored.explanation()).as(mode).containsEntry("path", mode + "+dense");
            Retrieval.Result alone = m.retrieve(
                    g,
                    Retrieval.Query.of("q", QUERY, t -> QUERY).withEntities(new int[] {0}),
                    Retrieval.params(m, Map.of("with_dense", 0.0)),
                    4);
            assertThat(alone.explanation()).as(mode).containsEntry("path", mode);
            assertThat(anchored.explanation()).containsEntry("anchor_support", 1.0);
        }
    }

    @Test
    void whereTheGraphCarriesTheQuestionAModeFusesItsRankingWithTheDenseOne() {
        MemoryGraph g = graph();
        Retrieval.Query agni = Retrieval.Query.of("q", QUERY, t -> QUERY).withEntities(new int[] {0});
        Retrieval.Mode m = Retrieval.mode("pabd");
        assertThat(m.defaults()).containsEntry("with_dense", 8.0);
        assertThat(Retrieval.mode("fusion").defaults()).containsEntry("with_dense", 5.0);
        assertThat(Retrieval.mode("gem").defaults()).containsEntry("with_dense", 2.0);
        assertThat(Retrieval.mode("como").defaults()).containsEntry("with_dense", 0.0);

        List<Retrieval.Scored> alone = m.retrieve(g, agni, Retrieval.params(m, Map.of("with_dense", 0.0)), 4)
                .ranked();
        Retrieval.Mode dense = Retrieval.mode("dense");
        List<Retrieval.Scored> byMeaning =
                dense.retrieve(g, agni, Retrieval.params(dense, Map.of()), 4).ranked();
        // a dense weight far above the mode's own: the dense order; the fused scores are the reciprocal ranks'
        List<Retrieval.Scored> mostlyDense = m.retrieve(g, agni, Retrieval.params(m, Map.of("with_dense", 100.0)), 4)
                .ranked();
        assertThat(mostlyDense)
                .extracting(Retrieval.Scored::passage)
                .containsExactlyElementsOf(
                        byMeaning.stream().map(Retrieval.Scored::passage).toList());
        int first = alone.get(0).passage();
        int rankInDense =
                byMeaning.stream().map(Retrieval.Scored::passage).toList().indexOf(first);
        double expected = 1.0 / 11 + (rankInDense < 0 ? 0 : 100.0 / (11 + rankInDense));
        assertThat(mostlyDense.stream()
                        .filter(s -> s.passage() == first)
                        .findFirst()
                        .orElseThrow()
                        .score())
                .isCloseTo(expected, Offset.offset(1e-9));
        assertThatThrownBy(() -> Retrieval.params(m, Map.of("with_dense", -1.0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("with_dense");
    }

    @Test
    void theSupportAGuardedModeAsksForIsAParameterWithinItsBounds() {
        Retrieval.Mode m = Retrieval.mode("cogito");
        assertThat(m.defaults()).containsEntry("min_support", 0.95);
        assertThat(m.usesQueryEntities()).isTrue();
        assertThatThrownBy(() -> Retrieval.params(m, Map.of("min_support", 1.5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("min_support");
        // above 1, no question has the support: always the dense ranking
        Retrieval.Result always = m.retrieve(
                graph(),
                Retrieval.Query.of("q", QUERY, t -> QUERY).withEntities(new int[] {0}),
                Retrieval.params(m, Map.of("min_support", 1.01)),
                4);
        assertThat(always.explanation()).containsEntry("path", "dense");
    }

    @Test
    void comoProbesAgainWithTheEntitiesItsEvidenceNames() {
        Retrieval.Mode m = Retrieval.mode("como");
        MemoryGraph g = graph();
        Retrieval.Result r = m.retrieve(
                g,
                Retrieval.Query.of("When was the director of Agni born?", QUERY, t -> QUERY)
                        .withEntities(new int[] {0}),
                Retrieval.params(m, Map.of()),
                3);

        assertThat(r.ranked().stream().map(s -> g.passage(s.passage()).id()).toList())
                .contains("p0", "p1");
        assertThat(r.explanation().get("rounds").toString()).contains("Swapan Saha");
    }

    @Test
    void comoWindowSizesFollowTheDocumentLength() {
        assertThat(EpisodicWindows.size(1)).isEqualTo(3);
        assertThat(EpisodicWindows.size(50)).isEqualTo(5);
        assertThat(EpisodicWindows.size(100)).isEqualTo(8);
        assertThat(EpisodicWindows.size(200)).isEqualTo(10);
        assertThat(EpisodicWindows.size(1000)).isEqualTo(19);
        assertThat(EpisodicWindows.size(1_000_000)).isEqualTo(20);
        assertThat(EpisodicWindows.ranges(7))
                .containsExactly(
                        new int[] {0, 3}, new int[] {1, 4}, new int[] {2, 5}, new int[] {3, 6}, new int[] {4, 7});
    }

    @Test
    void hybridFusesTheThreeStreams() {
        List<String> ranked = run("hybrid", "When was Swapan Saha the director of Agni born?", Map.of(), 0);
        assertThat(ranked.subList(0, 2)).containsExactlyInAnyOrder("p0", "p1");
    }

    @Test
    void hybridReachesTheSecondHopThroughTheBridgeEntityOfItsBestPassage() {
        // the question names Agni, not its director; only the probe anchored on the bridge ("Swapan Saha") looks like
        // p1
        float[] secondHop = unit(0, 0.2f, 1);
        Function<String, float[]> embedder = t -> t.endsWith(" Swapan Saha") ? secondHop : QUERY;
        Retrieval.Mode m = Retrieval.mode("hybrid");
        MemoryGraph g = graph();
        String question = "When was the director of Agni born?";
        Retrieval.Query query = Retrieval.Query.of(question, QUERY, embedder).withEntities(new int[] {0});

        Retrieval.Result with = m.retrieve(g, query, Retrieval.params(m, Map.of("bridge_probe", 0.0)), 4);
        Retrieval.Result without = m.retrieve(g, query, Retrieval.params(m, Map.of("bridges", 0.0)), 4);

        assertThat(with.explanation().get("bridges")).isEqualTo(List.of("Swapan Saha"));
        assertThat(without.explanation()).doesNotContainKey("bridges");
        assertThat(rankOf(g, with, "p1")).isLessThan(rankOf(g, without, "p1"));
        assertThat(Math.max(rankOf(g, with, "p0"), rankOf(g, with, "p1"))).isEqualTo(1); // both hops on top
    }

    @Test
    void aBridgesOwnPageIsAPassageLinkedToItOfADocumentTitledByItsName() {
        MemoryGraph g = graph();
        int saha = g.entityNames.indexOf("Swapan Saha");
        int agni = g.entityNames.indexOf("Agni");
        int spring = g.entityNames.indexOf("spring");
        // Saha is linked to p0 (titled Agni) and p1 (titled Swapan Saha); spring only to p2, titled Rivers: the pages
        // of the first cue that has any
        assertThat(Bridge.pages(g, List.of(spring, saha, agni)))
                .extracting(i -> g.passage(i).id())
                .containsExactly("p1");
        assertThat(Bridge.pages(g, List.of(agni, saha)))
                .extracting(i -> g.passage(i).id())
                .containsExactly("p0");
        assertThat(Bridge.pages(g, List.of(spring))).isEmpty();
        assertThat(Bridge.withoutAside("Rottweil (town)")).isEqualTo("Rottweil");
        assertThat(Bridge.withoutAside("  A (b) c ")).isEqualTo("A (b) c");
        assertThat(Bridge.withoutAside("(1966)")).isEqualTo("(1966)");
        assertThat(Bridge.withoutAside(null)).isEmpty();
        // the pages lead the second hop's ranking, the rest keeps its order
        List<Retrieval.Scored> second = List.of(new Retrieval.Scored(0, 0.9), new Retrieval.Scored(1, 0.8));
        assertThat(Bridge.leading(List.of(1), second))
                .extracting(Retrieval.Scored::passage)
                .containsExactly(1, 0);
        assertThat(Bridge.leading(List.of(), second)).isSameAs(second);
    }

    @Test
    void aPageIsFoundInTheLooseFormOfItsTitleAndItsNameWithoutAsides() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int p0 = b.passage(passage("p0", "Novair", "Novair is part of the Rank Organisation."), unit(1, 0, 0));
        int p1 = b.passage(passage("p1", "The Rank Organisation", "The Rank Organisation was ..."), unit(0, 1, 0));
        int p2 = b.passage(passage("p2", "Rottweil (town)", "Rottweil is a town."), unit(0, 0, 1));
        int rank = b.entity("e-rank", "Rank Organisation");
        int rottweil = b.entity("e-rottweil", "Rottweil (town)");
        b.link(rank, p0);
        b.link(rank, p1);
        b.link(rottweil, p2);
        MemoryGraph g = b.build();
        assertThat(Bridge.pages(g, List.of(rank))).containsExactly(p1);
        assertThat(Bridge.pages(g, List.of(rottweil))).containsExactly(p2);
    }

    @Test
    void aBridgesPageIsPlacedByTheRankItMayTakeAtTheLatestAndScoresStillDescend() {
        List<Retrieval.Scored> ranked = new ArrayList<>();
        double[] scores = new double[12];
        for (int i = 0; i < 6; i++) {
            ranked.add(new Retrieval.Scored(i, 10 - i)); // passages 0..5 scored 10..5
            scores[i] = 10 - i;
        }
        scores[9] = 1;
        scores[10] = 2;
        // from outside: the page's passage the fusion scored best takes the fifth place, with the score of the passage
        // it displaces; the last drops out
        List<Retrieval.Scored> in = Bridge.placed(ranked, List.of(9, 10), scores, 5, 6);
        assertThat(in).extracting(Retrieval.Scored::passage).containsExactly(0, 1, 2, 3, 10, 4);
        assertThat(in.get(4).score()).isEqualTo(6.0);
        // from below: moved up
        assertThat(Bridge.placed(ranked, List.of(5), scores, 5, 6))
                .extracting(Retrieval.Scored::passage)
                .containsExactly(0, 1, 2, 3, 5, 4);
        // a passage of the page already there, or placed only within what was asked for: unchanged
        assertThat(Bridge.placed(ranked, List.of(9, 1), scores, 5, 6)).isSameAs(ranked);
        assertThat(Bridge.placed(ranked.subList(0, 3), List.of(9), scores, 5, 3))
                .isEqualTo(ranked.subList(0, 3));
        assertThat(Bridge.placed(ranked, List.of(), scores, 5, 6)).isSameAs(ranked);
        // a list shorter than the rank: appended
        assertThat(Bridge.placed(ranked.subList(0, 2), List.of(9), scores, 5, 5))
                .extracting(Retrieval.Scored::passage)
                .containsExactly(0, 1, 9);
        for (List<Retrieval.Scored> r : List.of(in, Bridge.placed(ranked, List.of(5), scores, 2, 6))) {
            for (int i = 1; i < r.size(); i++) {
                assertThat(r.get(i).score()).isLessThanOrEqualTo(r.get(i - 1).score());
            }
            assertThat(r.stream().map(Retrieval.Scored::passage).distinct().count())
                    .isEqualTo(r.size());
        }
    }

    @Test
    void hybridPlacesTheStrongestBridgesOwnPageAndSaysSo() {
        Retrieval.Mode m = Retrieval.mode("hybrid");
        MemoryGraph g = graph();
        Retrieval.Query query = Retrieval.Query.of("When was the director of Agni born?", QUERY, t -> QUERY)
                .withEntities(new int[] {0});

        Retrieval.Result first = m.retrieve(g, query, Retrieval.params(m, Map.of("bridge_page", 1.0)), 4);
        Retrieval.Result off = m.retrieve(g, query, Retrieval.params(m, Map.of("bridge_page", 0.0)), 4);

        assertThat(first.explanation().get("bridges")).isEqualTo(List.of("Swapan Saha"));
        assertThat(rankOf(g, first, "p1")).isZero();
        @SuppressWarnings("unchecked")
        Map<String, Object> page = (Map<String, Object>) first.explanation().get("bridge_page");
        assertThat(page).containsEntry("title", "Swapan Saha").containsEntry("at_most", 1);
        assertThat(page.get("placed")).isEqualTo(rankOf(g, off, "p1") > 0);
        assertThat(off.explanation()).doesNotContainKey("bridge_page");
    }

    @Test
    void hybridFusesComosRankingAsAStreamOnlyWhenAskedTo() {
        Retrieval.Mode m = Retrieval.mode("hybrid");
        Retrieval.Mode como = Retrieval.mode("como");
        MemoryGraph g = graph();
        Retrieval.Query query = Retrieval.Query.of("When was the director of Agni born?", QUERY, t -> QUERY)
                .withEntities(new int[] {0});
        // como's stream alone: every other stream weighed 0, the bridge step off
        Map<String, Double> alone =
                Map.of("w_como", 1.0, "w_cogito", 0.0, "w_dense", 0.0, "w_bm25", 0.0, "w_time", 0.0, "bridges", 0.0);

        Retrieval.Result fused = m.retrieve(g, query, Retrieval.params(m, alone), 4);
        Retrieval.Result own = como.retrieve(g, query, Retrieval.params(como, Map.of()), 4);
        Retrieval.Result off = m.retrieve(g, query, Retrieval.params(m, Map.of()), 4);

        assertThat(fused.ranked()).isNotEmpty();
        assertThat(fused.ranked().stream().map(Retrieval.Scored::passage).toList())
                .isEqualTo(own.ranked().stream().map(Retrieval.Scored::passage).toList());
        assertThat(fused.explanation()).containsKey("como");
        assertThat(off.explanation()).doesNotContainKey("como"); // off by default: no como work
    }

    @Test
    void aComposedProbeIsTheQueryPlusTheBridgeEntityAndCallsNoModel() {
        // the default probe: the query's vector plus the bridge entity's ("name: description"), normalized; what it
        // finds on the dev sets is measured in docs/retrieval.md, here only what it is
        float[] sahaVector = unit(0, 0.2f, 1.2f);
        MemoryGraph g = graph(sahaVector);
        Function<String, float[]> noModel = t -> {
            throw new AssertionError("embedded " + t);
        };
        Retrieval.Mode m = Retrieval.mode("hybrid");
        Retrieval.Query query = Retrieval.Query.of("When was the director of Agni born?", QUERY, noModel)
                .withEntities(new int[] {0});

        Retrieval.Result with = m.retrieve(g, query, Retrieval.params(m, Map.of()), 4);

        assertThat(with.explanation().get("bridges")).isEqualTo(List.of("Swapan Saha"));
        assertThat(Math.max(rankOf(g, with, "p0"), rankOf(g, with, "p1"))).isEqualTo(1);
        int saha = g.entityNames.indexOf("Swapan Saha");
        float[] probe = unit(QUERY[0] + sahaVector[0], QUERY[1] + sahaVector[1], QUERY[2] + sahaVector[2]);
        double[] found = Bridge.secondHop(g, query, List.of(saha), 4, true);
        for (Retrieval.Scored s : g.passageSearch.nearest(probe, 4)) {
            assertThat(found[s.passage()]).isCloseTo(s.score(), Offset.offset(1e-6));
        }
        // an entity without a vector: the probe is the query itself
        int agni = g.entityNames.indexOf("Agni");
        double[] bare = Bridge.secondHop(g, query, List.of(agni), 4, true);
        for (Retrieval.Scored s : g.passageSearch.nearest(QUERY, 4)) {
            assertThat(bare[s.passage()]).isCloseTo(s.score(), Offset.offset(1e-6));
        }
    }

    @Test
    void aVariantNamesAModeWithItsParameterOverrides() {
        Retrieval.Variant v = Retrieval.Variant.parse("hybrid:w_dense=0.7:rrf_k=20");
        assertThat(v.mode()).isEqualTo("hybrid");
        assertThat(v.params()).containsExactly(Map.entry("w_dense", 0.7), Map.entry("rrf_k", 20.0));
        assertThat(Retrieval.Variant.parse("dense").params()).isEmpty();
        assertThatThrownBy(() -> Retrieval.Variant.parse("densest")).hasMessageContaining("unknown mode");
        assertThatThrownBy(() -> Retrieval.Variant.parse("hybrid:w_dense")).hasMessageContaining("name=value");
        assertThatThrownBy(() -> Retrieval.Variant.parse("hybrid:w_dense=much")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> Retrieval.Variant.parse("dense:rrf_k=3")).hasMessageContaining("no parameter");
        assertThatThrownBy(() -> Retrieval.Variant.parse("hybrid:bridge_probe=2"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aBridgeIsNewLeadsSomewhereAndIsNoHub() {
        MemoryGraphBuilder b = MemoryGraph.builder(3);
        int top = b.passage(passage("t", "Top", "top"), unit(1, 0, 0));
        int other = b.passage(passage("o", "Other", "other"), unit(0, 1, 0));
        int third = b.passage(passage("x", "Third", "third"), unit(0, 0, 1));
        int named = b.entity("e-named", "Agni");
        int lonely = b.entity("e-lonely", "Lonely");
        int hub = b.entity("e-hub", "Hub");
        int bridge = b.entity("e-bridge", "Bridge");
        int probed = b.entity("e-probed", "Probed");
        int year = b.entity("e-1930", "1930", EntityType.DATE);
        int word = b.entity("e-tribe", "legendary tribe", EntityType.CONCEPT);
        for (int e : new int[] {named, hub, bridge, probed, year, word}) {
            b.link(e, top);
            b.link(e, other);
        }
        b.link(lonely, top);
        b.link(hub, third);
        MemoryGraph g = b.build();
        double[] scores = {1.0, 0.5, Double.NEGATIVE_INFINITY};

        List<Integer> cues = Bridge.cues(g, scores, 1, Set.of(probed), "What did agni do?", 5, 2);

        // named by the question, degree 1, degree 3 > 2, already probed, a date, a common noun
        assertThat(cues).containsExactly(bridge);
        assertThat(Bridge.cues(g, scores, 1, Set.of(), "What did agni do?", 5, 3))
                .containsExactly(bridge, probed, hub); // ties by index; the hub's higher degree weighs it down
    }

    private static int rankOf(MemoryGraph g, Retrieval.Result r, String id) {
        List<String> ids =
                r.ranked().stream().map(s -> g.passage(s.passage()).id()).toList();
        assertThat(ids).contains(id);
        return ids.indexOf(id);
    }

    @Test
    void parametersAreValidated() {
        Retrieval.Mode cogito = Retrieval.mode("cogito");
        assertThat(Retrieval.params(cogito, Map.of("epsilon", 0.5)).get("epsilon"))
                .isEqualTo(0.5);
        assertThat(Retrieval.params(cogito, Map.of()).get("alpha")).isEqualTo(2.0);
        assertThatThrownBy(() -> Retrieval.params(cogito, Map.of("gamma_ray", 1.0)))
                .hasMessageContaining("no parameter 'gamma_ray'");
        assertThatThrownBy(() -> Retrieval.params(cogito, Map.of("epsilon", Double.NaN)))
                .hasMessageContaining("finite");
        assertThatThrownBy(() -> Retrieval.mode("telepathy")).hasMessageContaining("available: dense");
        // parameters that size the work are bounded, so no request can ask for a billion candidates
        for (String[] p : new String[][] {
            {"cogito", "dense_candidates"},
            {"hybrid", "top_facts"},
            {"hybrid", "depth"},
            {"fusion", "k1"},
            {"pabd", "k_max"}
        }) {
            assertThatThrownBy(() -> Retrieval.params(Retrieval.mode(p[0]), Map.of(p[1], 1e9)))
                    .as(p[0] + " " + p[1])
                    .hasMessageContaining("must be between");
        }
    }

    /**
     * Every parameter of every mode has bounds that hold its default, and each mode answers at every bound of each of
     * its parameters: a request can ask for any value the bounds allow without the mode failing on it.
     */
    @Test
    void everyParameterIsBoundedAndEveryModeAnswersAtItsBounds() {
        for (String name : Retrieval.modes()) {
            Retrieval.Mode m = Retrieval.mode(name);
            assertThat(m.bounds().keySet())
                    .as(name)
                    .containsExactlyInAnyOrderElementsOf(m.defaults().keySet());
            m.defaults().forEach((param, value) -> {
                double[] range = m.bounds().get(param);
                assertThat(value).as("%s %s", name, param).isBetween(range[0], range[1]);
                for (double v : new double[] {range[0], range[1], Math.nextDown(range[0]), Math.nextUp(range[1])}) {
                    boolean allowed = v >= range[0] && v <= range[1];
                    if (!allowed) {
                        assertThatThrownBy(() -> Retrieval.params(m, Map.of(param, v)))
                                .as("%s %s = %s", name, param, v)
                                .hasMessageContaining("must be between");
                        continue;
                    }
                    MemoryGraph g = graph(unit(0.5f, 0.5f, 0.5f));
                    Retrieval.Result r = m.retrieve(
                            g,
                            Retrieval.Query.of("Who directed Agni?", QUERY, t -> QUERY)
                                    .withEntities(new int[] {1}),
                            Retrieval.params(m, Map.of(param, v)),
                            4);
                    assertThat(r.ranked()).as("%s %s = %s", name, param, v).hasSizeLessThanOrEqualTo(4);
                }
            });
        }
    }

    @Test
    void gemRanksAPassageWithoutQuestionsByItsOwnVectorWhereverItStandsAmongPassages() {
        MemoryGraphBuilder b = MemoryGraph.builder(3);
        // ten passages very near the query by their own vectors, whose questions are about something else
        for (int i = 0; i < 10; i++) {
            int p = b.passage(passage("q" + i, "T" + i, "Text " + i), unit(1, 0.1f * (i + 1), 0));
            b.questions(p, List.of(unit(0.1f, 1, 0)));
        }
        // one passage without questions, farther by its vector than all ten, but nearer than their questions
        b.passage(passage("bare", "Bare", "No questions here."), unit(1, 0, 0.75f));
        MemoryGraph g = b.build();
        Retrieval.Mode gem = Retrieval.mode("gem");
        Retrieval.Result r =
                gem.retrieve(g, Retrieval.Query.of("q", QUERY, t -> QUERY), Retrieval.params(gem, GEM_ALONE), 2);
        assertThat(g.passage(r.ranked().get(0).passage()).id()).isEqualTo("bare");
    }

    @Test
    void splitsComparisonQuestionsIntoOneQueryPerAlternative() {
        assertThat(QueryDecomposition.split("Which film came out first, Agni or Arrête ton cinéma?"))
                .containsExactly("Which film came out first Agni?", "Which film came out first Arrête ton cinéma?");
        assertThat(QueryDecomposition.split("Who directed Agni?")).isEmpty();
        assertThat(QueryDecomposition.split("Is it tea or coffee?")).isEmpty();
    }
}
