package dev.engram.understanding;

import dev.engram.schemas.TimeWords;
import dev.engram.schemas.TimeWords.Word;
import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.Month;
import java.time.YearMonth;
import java.time.format.TextStyle;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Time expressions that mean something only against the moment they were written ("yesterday", "last Saturday", "two
 * weeks ago", "next month"), resolved against that moment's date into what they name: a day, a week, a weekend, a
 * month, a season or a year. A chat turn in memory outlives its "yesterday"; the resolved date does not.
 *
 * <p>English only, and deliberately literal: an expression is resolved only when its words fix the answer ("on
 * Saturday" says nothing of which Saturday, "a few days ago" nothing of how many, and neither is resolved). Weeks start
 * on Monday; seasons are the northern hemisphere's meteorological ones (winter is December to February and is named by
 * its December's year). The scan reads words, never backtracks, and is linear in the text.
 */
public final class RelativeTime {

    private RelativeTime() {}

    /** What an expression names: a day, or a span of days with its label. */
    public enum Grain {
        DAY,
        WEEK,
        WEEKEND,
        MONTH,
        SEASON,
        YEAR
    }

    /**
     * An expression at {@code [start, end)} of the text and what it names: the days {@code from}–{@code to} (inclusive)
     * and their label ("7 May 2023", "the week of 1 May 2023", "May 2023", "summer 2022", "2022").
     */
    public record Resolved(
            int start, int end, String expression, Grain grain, LocalDate from, LocalDate to, String label) {}

    private static final Map<String, DayOfWeek> WEEKDAYS = Map.of(
            "monday", DayOfWeek.MONDAY,
            "tuesday", DayOfWeek.TUESDAY,
            "wednesday", DayOfWeek.WEDNESDAY,
            "thursday", DayOfWeek.THURSDAY,
            "friday", DayOfWeek.FRIDAY,
            "saturday", DayOfWeek.SATURDAY,
            "sunday", DayOfWeek.SUNDAY);

    /** Words before "last", "next", "this" or "past" that make it an ordinal, not a pointer from now. */
    private static final Set<String> DETERMINERS =
            Set.of("the", "a", "an", "that", "every", "each", "my", "your", "his", "her", "our", "their", "its");

    /** The longest number of years, months, weeks or days "… ago" is resolved for. */
    private static final int MAX_AGO = 200;

    /** Formats a day as the resolved dates are written: "7 May 2023". */
    public static String day(LocalDate d) {
        return d.getDayOfMonth() + " " + d.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH) + " "
                + d.getYear();
    }

    /** Formats a month: "May 2023". */
    public static String month(YearMonth m) {
        return m.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH) + " " + m.getYear();
    }

    /** Whether {@code text} holds an expression that would be resolved against some date. */
    public static boolean mentions(String text) {
        return !find(text, LocalDate.of(2000, 1, 1)).isEmpty();
    }

    /** The relative time expressions of {@code text}, resolved against the day {@code on}, in text order. */
    public static List<Resolved> find(String text, LocalDate on) {
        List<Word> words = TimeWords.words(text, true);
        List<Resolved> out = new ArrayList<>();
        int i = 0;
        while (i < words.size()) {
            Resolved r = at(text, words, i, on);
            if (r == null) {
                i++;
                continue;
            }
            out.add(r);
            while (i < words.size() && words.get(i).start() < r.end()) {
                i++;
            }
        }
        return out;
    }

    private static Resolved at(String text, List<Word> words, int i, LocalDate on) {
        String w = words.get(i).lower();
        String next = TimeWords.word(words, i + 1);
        switch (w) {
            case "yesterday" -> {
                return day(text, words, i, i, on.minusDays(1));
            }
            case "today", "tonight" -> {
                return day(text, words, i, i, on);
            }
            case "tomorrow" -> {
                return day(text, words, i, i, on.plusDays(1));
            }
            case "the" -> {
                if (next.equals("day")
                        && TimeWords.word(words, i + 2).equals("before")
                        && TimeWords.word(words, i + 3).equals("yesterday")) {
                    return day(text, words, i, i + 3, on.minusDays(2));
                }
                if (next.equals("day")
                        && TimeWords.word(words, i + 2).equals("after")
                        && TimeWords.word(words, i + 3).equals("tomorrow")) {
                    return day(text, words, i, i + 3, on.plusDays(2));
                }
                return null;
            }
            case "last", "this", "next", "past" -> {
                // "the last week of the tour", "every next month", "her last Saturday there": not this moment's
                return i > 0 && DETERMINERS.contains(words.get(i - 1).lower()) ? null : anchored(text, words, i, on);
            }
            default -> {
                return ago(text, words, i, on);
            }
        }
    }

    /** "last|this|next|past" followed by night, a weekday, week, weekend, month, year or a season. */
    private static Resolved anchored(String text, List<Word> words, int i, LocalDate on) {
        String w = words.get(i).lower();
        int at = i + 1;
        if (w.equals("this") && TimeWords.word(words, at).equals("past")) {
            w = "last"; // "this past Saturday"
            at++;
        }
        int direction =
                switch (w) {
                    case "last", "past" -> -1;
                    case "next" -> 1;
                    default -> 0;
                };
        String unit = TimeWords.word(words, at);
        if (unit.equals("night") && direction < 0) {
            return day(text, words, i, at, on.minusDays(1));
        }
        if (direction == 0 && (unit.equals("morning") || unit.equals("afternoon") || unit.equals("evening"))) {
            return day(text, words, i, at, on);
        }
        DayOfWeek weekday = WEEKDAYS.get(unit);
        if (weekday != null) {
            LocalDate d =
                    switch (direction) {
                        case -1 -> on.with(TemporalAdjusters.previous(weekday));
                        case 1 -> on.with(TemporalAdjusters.next(weekday));
                        default -> on.with(TemporalAdjusters.nextOrSame(weekday));
                    };
            return day(text, words, i, at, d);
        }
        LocalDate monday = on.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
        switch (unit) {
            case "week" -> {
                LocalDate start = monday.plusWeeks(direction);
                return span(text, words, i, at, Grain.WEEK, start, start.plusDays(6), "the week of " + day(start));
            }
            case "weekend" -> {
                LocalDate saturday = monday.plusDays(5).plusWeeks(direction);
                return span(
                        text,
                        words,
                        i,
                        at,
                        Grain.WEEKEND,
                        saturday,
                        saturday.plusDays(1),
                        "the weekend of " + day(saturday));
            }
            case "month" -> {
                YearMonth m = YearMonth.from(on).plusMonths(direction);
                return month(text, words, i, at, m);
            }
            case "year" -> {
                int y = on.getYear() + direction;
                return year(text, words, i, at, y);
            }
            case "spring", "summer", "fall", "autumn", "winter" -> {
                return season(text, words, i, at, unit, direction, on);
            }
            default -> {
                return null;
            }
        }
    }

    /** The season named {@code name}: the last one that ended before {@code on}, the one now, or the next to begin. */
    private static Resolved season(
            String text, List<Word> words, int i, int at, String name, int direction, LocalDate on) {
        Month first =
                switch (name) {
                    case "spring" -> Month.MARCH;
                    case "summer" -> Month.JUNE;
                    case "fall", "autumn" -> Month.SEPTEMBER;
                    default -> Month.DECEMBER;
                };
        // The season of this name that begins in the year of `on` (winter: in its December), then moved to the one
        // meant.
        LocalDate start = LocalDate.of(on.getYear(), first, 1);
        if (first == Month.DECEMBER && on.getMonthValue() <= 2) {
            start = start.minusYears(1); // January and February belong to the winter that began last December
        }
        LocalDate end = start.plusMonths(3).minusDays(1);
        switch (direction) {
            case -1 -> {
                if (!end.isBefore(on)) {
                    start = start.minusYears(1);
                }
            }
            case 1 -> {
                if (!start.isAfter(on)) {
                    start = start.plusYears(1);
                }
            }
            default -> {
                // "this summer": the one of this year
            }
        }
        end = start.plusMonths(3).minusDays(1);
        String label = (name.equals("autumn") ? "autumn" : name) + " " + start.getYear();
        return span(text, words, i, at, Grain.SEASON, start, end, label);
    }

    /** "two weeks ago", "3 days ago", "a year ago", "a couple of months ago". */
    private static Resolved ago(String text, List<Word> words, int i, LocalDate on) {
        String w = words.get(i).lower();
        int at = i + 1;
        int n;
        if (w.equals("a")
                && TimeWords.word(words, i + 1).equals("couple")
                && TimeWords.word(words, i + 2).equals("of")) {
            n = 2;
            at = i + 3;
        } else if (TimeWords.COUNTS.containsKey(w)) {
            n = TimeWords.COUNTS.get(w);
        } else if (!w.isEmpty() && w.length() <= 3 && TimeWords.digits(w)) {
            n = Integer.parseInt(w);
        } else {
            return null;
        }
        String unit = TimeWords.word(words, at);
        if (!TimeWords.word(words, at + 1).equals("ago") || n < 1 || n > MAX_AGO) {
            return null;
        }
        int last = at + 1;
        switch (unit) {
            case "day", "days" -> {
                return day(text, words, i, last, on.minusDays(n));
            }
            case "week", "weeks" -> {
                LocalDate start = on.minusWeeks(n).with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
                return span(text, words, i, last, Grain.WEEK, start, start.plusDays(6), "the week of " + day(start));
            }
            case "month", "months" -> {
                YearMonth m = YearMonth.from(on).minusMonths(n);
                return month(text, words, i, last, m);
            }
            case "year", "years" -> {
                int y = on.getYear() - n;
                return year(text, words, i, last, y);
            }
            default -> {
                return null;
            }
        }
    }

    private static Resolved month(String text, List<Word> words, int first, int last, YearMonth m) {
        return span(text, words, first, last, Grain.MONTH, m.atDay(1), m.atEndOfMonth(), month(m));
    }

    private static Resolved year(String text, List<Word> words, int first, int last, int y) {
        return span(
                text,
                words,
                first,
                last,
                Grain.YEAR,
                LocalDate.of(y, 1, 1),
                LocalDate.of(y, 12, 31),
                Integer.toString(y));
    }

    private static Resolved day(String text, List<Word> words, int first, int last, LocalDate d) {
        return span(text, words, first, last, Grain.DAY, d, d, day(d));
    }

    private static Resolved span(
            String text,
            List<Word> words,
            int first,
            int last,
            Grain grain,
            LocalDate from,
            LocalDate to,
            String label) {
        int start = words.get(first).start();
        int end = words.get(last).end();
        return new Resolved(start, end, text.substring(start, end), grain, from, to, label);
    }
}
