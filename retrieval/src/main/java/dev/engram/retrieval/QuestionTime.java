package dev.engram.retrieval;

import dev.engram.schemas.TimeWords;
import dev.engram.schemas.TimeWords.Word;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.List;
import java.util.Map;

/**
 * The time a question is about, when it names one: "on 3 June, 2023", "May 25, 2023", "in May 2023", "in 2022", "the
 * week before August 3, 2023", "two weeks before August 11, 2023". Read by a linear scan of its words; a question
 * that names no date, or only a time relative to now ("last year"), has none.
 *
 * <p>A window that leads up to a day ("the week before August 3") includes that day: what happened in the week before
 * is often told on the day itself ("last week I …").
 */
public final class QuestionTime {

    private QuestionTime() {}

    /** The days {@code from} to {@code to}, inclusive, and the words that named them. */
    public record Window(LocalDate from, LocalDate to, String expression) {
        public boolean contains(long epochDay) {
            return epochDay >= from.toEpochDay() && epochDay <= to.toEpochDay();
        }
    }

    private static final Map<String, Integer> MONTHS = Map.ofEntries(
            Map.entry("january", 1),
            Map.entry("jan", 1),
            Map.entry("february", 2),
            Map.entry("feb", 2),
            Map.entry("march", 3),
            Map.entry("mar", 3),
            Map.entry("april", 4),
            Map.entry("apr", 4),
            Map.entry("may", 5),
            Map.entry("june", 6),
            Map.entry("jun", 6),
            Map.entry("july", 7),
            Map.entry("jul", 7),
            Map.entry("august", 8),
            Map.entry("aug", 8),
            Map.entry("september", 9),
            Map.entry("sep", 9),
            Map.entry("sept", 9),
            Map.entry("october", 10),
            Map.entry("oct", 10),
            Map.entry("november", 11),
            Map.entry("nov", 11),
            Map.entry("december", 12),
            Map.entry("dec", 12));

    /** The days the words from {@code i} name ({@code from} = {@code to} for one day), and the word after them. */
    private record Named(LocalDate from, LocalDate to, int next) {
        boolean oneDay() {
            return from.equals(to);
        }
    }

    /** The window the question names, or null. The first date found decides. */
    public static Window of(String question) {
        List<Word> words = TimeWords.words(question, false);
        for (int i = 0; i < words.size(); i++) {
            Named named = date(words, i);
            if (named == null) {
                continue;
            }
            String expression = question.substring(
                    words.get(i).start(), words.get(named.next() - 1).end());
            Window before = anchored(question, words, i, named);
            if (before != null) {
                return before;
            }
            return new Window(named.from(), named.to(), expression);
        }
        return null;
    }

    /** "the week before X", "two weeks before X", "3 days after X": the window reaching from or to X's day. */
    private static Window anchored(String question, List<Word> words, int at, Named named) {
        if (!named.oneDay() || at < 2) {
            return null;
        }
        String direction = words.get(at - 1).lower();
        if (!direction.equals("before") && !direction.equals("after")) {
            return null;
        }
        String unit = words.get(at - 2).lower();
        int days =
                switch (unit) {
                    case "day", "days" -> 1;
                    case "week", "weeks", "weekend" -> 7;
                    case "month", "months" -> 31;
                    case "year", "years" -> 366;
                    default -> 0;
                };
        if (days == 0) {
            return null;
        }
        int n = 1;
        int first = at - 2;
        if (at >= 3) {
            String count = words.get(at - 3).lower();
            if (TimeWords.COUNTS.containsKey(count)) {
                n = TimeWords.COUNTS.get(count);
                first = at - 3;
            } else if (TimeWords.digits(count) && count.length() <= 3) {
                n = Integer.parseInt(count);
                first = at - 3;
            } else if (count.equals("the")) {
                first = at - 3;
            }
        }
        long reach = (long) n * days + (n > 1 ? days : 0); // "two weeks before": about then, so a unit further
        LocalDate anchor = named.from();
        String expression = question.substring(
                words.get(first).start(), words.get(named.next() - 1).end());
        return direction.equals("before")
                ? new Window(anchor.minusDays(reach), anchor, expression)
                : new Window(anchor, anchor.plusDays(reach), expression);
    }

    /** "3 June, 2023", "3rd of June 2023", "June 3, 2023", "May 2023", "in 2022" at word {@code i}; or null. */
    private static Named date(List<Word> words, int i) {
        String w = words.get(i).lower();
        Integer day = day(w);
        if (day != null) {
            int k = i + 1;
            if (TimeWords.word(words, k).equals("of")) {
                k++;
            }
            Integer month = MONTHS.get(TimeWords.word(words, k));
            Integer year = year(TimeWords.word(words, k + 1));
            if (month != null && year != null) {
                return named(year, month, day, k + 2);
            }
            return null;
        }
        Integer month = MONTHS.get(w);
        if (month != null) {
            Integer d = day(TimeWords.word(words, i + 1));
            Integer year = year(TimeWords.word(words, i + 2));
            if (d != null && year != null) {
                return named(year, month, d, i + 3);
            }
            year = year(TimeWords.word(words, i + 1));
            if (year != null && (i == 0 || day(words.get(i - 1).lower()) == null)) {
                YearMonth m = YearMonth.of(year, month);
                return new Named(m.atDay(1), m.atEndOfMonth(), i + 2);
            }
            return null;
        }
        Integer year = year(w);
        if (year != null
                && i > 0
                && (words.get(i - 1).lower().equals("in")
                        || words.get(i - 1).lower().equals("during"))) {
            return new Named(LocalDate.of(year, 1, 1), LocalDate.of(year, 12, 31), i + 1);
        }
        return null;
    }

    private static Named named(int year, int month, int day, int next) {
        try {
            LocalDate d = LocalDate.of(year, month, day);
            return new Named(d, d, next);
        } catch (DateTimeException e) {
            return null; // "31 June": no such day
        }
    }

    private static Integer day(String w) {
        String digits = w;
        for (String suffix : new String[] {"st", "nd", "rd", "th"}) {
            if (w.endsWith(suffix)) {
                digits = w.substring(0, w.length() - 2);
            }
        }
        if (digits.isEmpty() || digits.length() > 2 || !TimeWords.digits(digits)) {
            return null;
        }
        int d = Integer.parseInt(digits);
        return d >= 1 && d <= 31 ? d : null;
    }

    private static Integer year(String w) {
        if (w.length() != 4 || !TimeWords.digits(w)) {
            return null;
        }
        int y = Integer.parseInt(w);
        return y >= 1000 && y <= 2999 ? y : null;
    }
}
