package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A question that names a day reads that day's passages, by meaning. */
class InTimeTest {

    private static long at(String day) {
        return LocalDate.parse(day).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli() + 3_600_000;
    }

    @Test
    void thePassagesOfTheNamedDaysMostSimilarFirst() {
        MemoryGraphBuilder b = MemoryGraph.builder(1);
        int june16a = b.passage(new Passage("a", "a", "", List.of(), "a", "a", 0, 1), new float[] {1, 0});
        int june16b = b.passage(new Passage("b", "b", "", List.of(), "b", "b", 0, 1), new float[] {0, 1});
        int june17 = b.passage(new Passage("c", "c", "", List.of(), "c", "c", 0, 1), new float[] {1, 0});
        int undated = b.passage(new Passage("d", "d", "", List.of(), "d", "d", 0, 1), new float[] {1, 0});
        b.time(june16a, at("2023-06-16"));
        b.time(june16b, at("2023-06-16"));
        b.time(june17, at("2023-06-17"));
        MemoryGraph g = b.build();

        QuestionTime.Window window = QuestionTime.of("What did Maria share on 16 June, 2023?");
        assertThat(InTime.rank(g, new float[] {0, 1}, window, 10))
                .extracting(Retrieval.Scored::passage)
                .containsExactly(june16b, june16a);
        assertThat(g.passagesBetween(window.from().toEpochDay(), window.to().toEpochDay() + 1))
                .containsExactlyInAnyOrder(june16a, june16b, june17);
        assertThat(g.datedPassages()).isEqualTo(3);
        assertThat(InTime.rank(g, new float[] {0, 1}, QuestionTime.of("in 1999"), 10))
                .isEmpty();
        assertThat(InTime.rank(g, new float[] {0, 1}, null, 10)).isEmpty();
        assertThat(InTime.explain(g, window)).containsEntry("passages", 2).containsEntry("from", "2023-06-16");
        assertThat(undated).isEqualTo(3);
    }
}
