package dev.engram.understanding;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;

class RelativeTimeTest {

    /** Monday 8 May 2023. */
    private static final LocalDate MONDAY = LocalDate.of(2023, 5, 8);

    private static List<String> labels(String text, LocalDate on) {
        return RelativeTime.find(text, on).stream()
                .map(r -> r.expression() + "=" + r.label())
                .toList();
    }

    @Test
    void daysAroundTheDayOfWriting() {
        assertThat(labels("I went to a support group yesterday.", MONDAY)).containsExactly("yesterday=7 May 2023");
        assertThat(labels("Today I start; tomorrow I rest; last night was long.", MONDAY))
                .containsExactly("Today=8 May 2023", "tomorrow=9 May 2023", "last night=7 May 2023");
        assertThat(labels("the day before yesterday and the day after tomorrow", MONDAY))
                .containsExactly("the day before yesterday=6 May 2023", "the day after tomorrow=10 May 2023");
    }

    @Test
    void weekdaysPointBackOrForwardFromTheDay() {
        assertThat(labels("last Saturday, this Friday, next Monday, this past Sunday", MONDAY))
                .containsExactly(
                        "last Saturday=6 May 2023",
                        "this Friday=12 May 2023",
                        "next Monday=15 May 2023",
                        "this past Sunday=7 May 2023");
        // said on a Saturday, "last Saturday" is a week before, not the same day
        assertThat(labels("last Saturday", LocalDate.of(2023, 5, 13))).containsExactly("last Saturday=6 May 2023");
    }

    @Test
    void weeksMonthsYearsAndSeasonsAreSpans() {
        assertThat(labels("last week, next weekend, last month, next year", MONDAY))
                .containsExactly(
                        "last week=the week of 1 May 2023",
                        "next weekend=the weekend of 20 May 2023",
                        "last month=April 2023",
                        "next year=2024");
        assertThat(labels("last summer", MONDAY)).containsExactly("last summer=summer 2022");
        assertThat(labels("last summer", LocalDate.of(2023, 10, 2))).containsExactly("last summer=summer 2023");
        assertThat(labels("last winter", LocalDate.of(2023, 1, 20))).containsExactly("last winter=winter 2021");
        assertThat(labels("this winter", LocalDate.of(2023, 1, 20))).containsExactly("this winter=winter 2022");
        assertThat(labels("last month", LocalDate.of(2023, 1, 31))).containsExactly("last month=December 2022");
    }

    @Test
    void countsAgo() {
        assertThat(labels("two weeks ago, 3 days ago, a year ago, a couple of months ago", MONDAY))
                .containsExactly(
                        "two weeks ago=the week of 24 April 2023",
                        "3 days ago=5 May 2023",
                        "a year ago=2022",
                        "a couple of months ago=March 2023");
        RelativeTime.Resolved r = RelativeTime.find("4 years ago", MONDAY).get(0);
        assertThat(r.from()).isEqualTo(LocalDate.of(2019, 1, 1));
        assertThat(r.to()).isEqualTo(LocalDate.of(2019, 12, 31));
    }

    @Test
    void whatTheWordsDoNotFixIsLeftAlone() {
        assertThat(labels(
                        "on Saturday, a few days ago, the last week of the tour, every next month, yesterday's news, "
                                + "1000 years ago, last-minute, her last Saturday there, the next day",
                        MONDAY))
                .isEmpty();
        assertThat(RelativeTime.mentions("The Battle of Hastings was fought in 1066."))
                .isFalse();
        assertThat(RelativeTime.mentions("We met yesterday.")).isTrue();
    }

    @Test
    void hostileTextIsScannedInOnePass() {
        String text = "last ".repeat(200_000) + "a couple of ".repeat(100_000) + "ago";
        assertThat(RelativeTime.find(text, MONDAY)).isEmpty();
        assertThat(RelativeTime.find("", MONDAY)).isEmpty();
        assertThat(RelativeTime.find("yesterday", LocalDate.MIN.plusDays(1))).hasSize(1);
    }
}
