package dev.engram.retrieval;

import java.util.ArrayList;
import java.util.List;

/** ComoRAG's episodic layer (§B.1): sliding windows over a document's passages in reading order. */
public final class EpisodicWindows {

    private EpisodicWindows() {}

    /** §B.1: 3, 5, 8 or 10 passages for documents of up to 20, 50, 100 or 200; beyond, min(20, max(10, ⌊2·log2 N⌋)). */
    public static int size(int n) {
        if (n <= 20) {
            return 3;
        } else if (n <= 50) {
            return 5;
        } else if (n <= 100) {
            return 8;
        } else if (n <= 200) {
            return 10;
        }
        return Math.min(20, Math.max(10, (int) Math.floor(Math.log(n) / Math.log(2) * 2)));
    }

    /** Windows overlap by half their size. */
    public static int stride(int size) {
        return Math.max(1, size / 2);
    }

    /** The [from, to) ranges of the windows over n passages. */
    public static List<int[]> ranges(int n) {
        List<int[]> out = new ArrayList<>();
        int w = size(n);
        for (int from = 0; from < n; from += stride(w)) {
            out.add(new int[] {from, Math.min(n, from + w)});
            if (from + w >= n) {
                break;
            }
        }
        return out;
    }
}
