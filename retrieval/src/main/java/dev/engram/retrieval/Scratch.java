package dev.engram.retrieval;

import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Arrays of one length that queries on one snapshot reuse, so that a query over a large namespace neither allocates
 * nor clears an array per unit or per passage: a caller takes one, clears the entries it wrote and gives it back (an
 * array that is not given back, because its query failed, is simply left to the collector). A few are kept, for
 * queries running at once.
 */
final class Scratch {

    /**
     * How many of each kind are kept: one per processor, two to four. More queries than processors at once run no
     * faster for it, and an array may be a few megabytes (one per unit of a namespace of 100k passages, about 1.3
     * million), counted towards the snapshots' memory budget as many times as are kept.
     */
    private static final int KEPT = Math.min(4, Math.max(2, Runtime.getRuntime().availableProcessors()));

    private final int length;
    private final ConcurrentLinkedQueue<double[]> sums = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<boolean[]> flags = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<int[]> ints = new ConcurrentLinkedQueue<>();

    Scratch(int length) {
        this.length = length;
    }

    /** The most bytes the arrays kept may take. */
    long maxBytes() {
        return (long) KEPT * length * (Double.BYTES + 1 + Integer.BYTES);
    }

    /** An array of zeros. */
    double[] sums() {
        double[] a = sums.poll();
        return a == null ? new double[length] : a;
    }

    /** An array of {@code false}. */
    boolean[] flags() {
        boolean[] a = flags.poll();
        return a == null ? new boolean[length] : a;
    }

    /** An array of ints whose values the caller must not rely on (a work queue, say). */
    int[] ints() {
        int[] a = ints.poll();
        return a == null ? new int[length] : a;
    }

    /** Takes back an array of ints, whatever it holds. */
    void giveBack(int[] a) {
        if (ints.size() < KEPT) {
            ints.offer(a);
        }
    }

    /** Takes back an array the caller has set to zero again. */
    void giveBack(double[] a) {
        if (sums.size() < KEPT) {
            sums.offer(a);
        }
    }

    /** Takes back an array the caller has set to {@code false} again. */
    void giveBack(boolean[] a) {
        if (flags.size() < KEPT) {
            flags.offer(a);
        }
    }
}
