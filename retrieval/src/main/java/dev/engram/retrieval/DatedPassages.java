package dev.engram.retrieval;

import java.util.Arrays;
import java.util.BitSet;

/**
 * The passages of a snapshot that have an event time, in order of their day (UTC epoch day), and those days: what a
 * question that names a time reads ({@link MemoryGraph#passagesBetween}).
 */
final class DatedPassages {

    private final int[] byDay;
    private final long[] days;

    /**
     * From each dated passage's event time (epoch milliseconds), by passage index: {@code times[i]} where {@code dated}
     * holds {@code i}, of {@code passages} passages.
     */
    DatedPassages(int passages, BitSet dated, long[] times) {
        long[][] byTime = new long[dated.cardinality()][];
        int n = 0;
        for (int i = dated.nextSetBit(0); i >= 0 && i < passages; i = dated.nextSetBit(i + 1)) {
            byTime[n++] = new long[] {Math.floorDiv(times[i], 86_400_000L), i};
        }
        Arrays.sort(byTime, 0, n, (x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
        this.byDay = new int[n];
        this.days = new long[n];
        for (int i = 0; i < n; i++) {
            days[i] = byTime[i][0];
            byDay[i] = (int) byTime[i][1];
        }
    }

    /** The passages whose event time falls on the days {@code from} to {@code to} (UTC epoch days, inclusive). */
    int[] between(long from, long to) {
        int lo = firstDay(from);
        int hi = firstDay(to + 1);
        return Arrays.copyOfRange(byDay, lo, Math.max(lo, hi));
    }

    /** How many passages have an event time. */
    int count() {
        return byDay.length;
    }

    private int firstDay(long day) {
        int lo = 0;
        int hi = days.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (days[mid] < day) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
