package dev.engram.retrieval;

import java.util.Arrays;

/**
 * A growable list of (group, value) pairs of small non-negative ints, laid out at the end as one array of values per
 * group: the links of a snapshot (entity → passages, passage → entities, entity → facts), which boxed lists would
 * build with an object per link on every snapshot.
 */
final class Pairs {

    private int[] groups = new int[256];
    private int[] values = new int[256];
    private int size;

    void add(int group, int value) {
        if (group < 0 || value < 0) {
            throw new IllegalArgumentException("negative group or value: " + group + ", " + value);
        }
        if (size == groups.length) {
            groups = Arrays.copyOf(groups, size * 2);
            values = Arrays.copyOf(values, size * 2);
        }
        groups[size] = group;
        values[size++] = value;
    }

    int size() {
        return size;
    }

    /**
     * Per group of {@code 0 … groupCount − 1}, its values in the order they were added, each once (a value added again
     * to a group keeps its first place). Groups and values must be below {@code groupCount} and {@code valueRange}.
     */
    int[][] grouped(int groupCount, int valueRange) {
        int[] start = new int[groupCount + 1];
        for (int i = 0; i < size; i++) {
            start[groups[i] + 1]++;
        }
        for (int g = 0; g < groupCount; g++) {
            start[g + 1] += start[g];
        }
        // the values laid out group after group, each group's in the order added (a stable counting sort)
        int[] sorted = new int[size];
        int[] next = Arrays.copyOf(start, groupCount);
        for (int i = 0; i < size; i++) {
            sorted[next[groups[i]]++] = values[i];
        }
        // a value's mark says which group last took it: 2g + 1 while counting group g's values, 2g + 2 while copying
        int[] mark = new int[valueRange];
        int[][] out = new int[groupCount][];
        for (int g = 0; g < groupCount; g++) {
            int distinct = 0;
            for (int i = start[g]; i < start[g + 1]; i++) {
                if (mark[sorted[i]] != 2 * g + 1) {
                    mark[sorted[i]] = 2 * g + 1;
                    distinct++;
                }
            }
            int[] own = new int[distinct];
            int at = 0;
            for (int i = start[g]; i < start[g + 1]; i++) {
                if (mark[sorted[i]] != 2 * g + 2) {
                    mark[sorted[i]] = 2 * g + 2;
                    own[at++] = sorted[i];
                }
            }
            out[g] = own;
        }
        return out;
    }
}
