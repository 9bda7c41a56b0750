package dev.engram.retrieval;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;

class QuestionTimeTest {

    private static String window(String question) {
        QuestionTime.Window w = QuestionTime.of(question);
        return w == null ? null : w.from() + ".." + w.to() + " [" + w.expression() + "]";
    }

    @Test
    void daysMonthsAndYearsInTheirCommonForms() {
        assertThat(window("What exciting news did Maria share on 16 June, 2023?"))
                .isEqualTo("2023-06-16..2023-06-16 [16 June, 2023]");
        assertThat(window("What event is Maria getting ready for on May 25, 2023?"))
                .isEqualTo("2023-05-25..2023-05-25 [May 25, 2023]");
        assertThat(window("What happened on the 3rd of June 2023?"))
                .isEqualTo("2023-06-03..2023-06-03 [3rd of June 2023]");
        assertThat(window("What did John attend with his colleagues in March 2023?"))
                .isEqualTo("2023-03-01..2023-03-31 [March 2023]");
        assertThat(window("Who won the cup in 1998?")).isEqualTo("1998-01-01..1998-12-31 [1998]");
    }

    @Test
    void aWindowBeforeOrAfterADayIncludesTheDay() {
        assertThat(window("What did John do the week before August 3, 2023 involving his kids?"))
                .isEqualTo("2023-07-27..2023-08-03 [the week before August 3, 2023]");
        assertThat(window("What is the name of Maria's puppy she got two weeks before August 11, 2023?"))
                .isEqualTo("2023-07-21..2023-08-11 [two weeks before August 11, 2023]");
        assertThat(window("What did she do 3 days after 1 May 2023?"))
                .isEqualTo("2023-05-01..2023-05-05 [3 days after 1 May 2023]");
    }

    @Test
    void noDateNoWindow() {
        for (String q : List.of(
                "When did Caroline go to the LGBTQ support group?",
                "What did John do last year?",
                "Who may 2023 remember?".replace("may", "might"),
                "What happened on 31 June 2023?",
                "Route 66 in 12 steps",
                "")) {
            assertThat(QuestionTime.of(q)).as(q).isNull();
        }
        assertThat(QuestionTime.of("in 1998").contains(LocalDate.of(1998, 7, 1).toEpochDay()))
                .isTrue();
    }
}
