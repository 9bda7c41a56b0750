package dev.engram.processors;

import dev.engram.schemas.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The merge score: a logistic model over the {@link MergeFeatures} of a candidate pair, whose weights are fit to
 * labelled pairs ({@code ./engram bench resolution --fit}). Its output is read as the probability that the two
 * surfaces are one referent, and a pair merges at {@link #MERGE_AT} or above. {@link #RULES} is the absence of a model:
 * the hand-written rules decide alone.
 *
 * @param id names the model in evidence and logs (for example {@code merge-score/1})
 * @param intercept the weight of the constant feature
 * @param weights a weight per feature name; a feature without one weighs nothing
 * @param fit how the weights were fit: the labelled pairs, the penalty, the held-out figures (shown, not read)
 */
public record MergeModel(String id, double intercept, Map<String, Double> weights, Map<String, Object> fit) {

    /** The probability at which a pair merges: a merge is to be right at least nine times in ten. */
    public static final double MERGE_AT = 0.9;

    /** No model: the rules decide. */
    public static final MergeModel RULES = new MergeModel("rules", 0, Map.of(), Map.of());

    /** Where the shipped model is, on the class path. */
    static final String RESOURCE = "merge-model.json";

    private static volatile MergeModel shipped;

    public MergeModel {
        Objects.requireNonNull(id, "id");
        // a weight that is no number would fail every decision that reads it, and stall the memory step: refuse it here
        if (!Double.isFinite(intercept)) {
            throw new IllegalArgumentException("the merge model's intercept is not a finite number");
        }
        if (weights != null) {
            weights.forEach((name, w) -> {
                if (w == null || !Double.isFinite(w)) {
                    throw new IllegalArgumentException(
                            "the merge model's weight of " + name + " is not a finite number");
                }
            });
        }
        weights = Collections.unmodifiableMap(new TreeMap<>(weights == null ? Map.of() : weights));
        fit = fit == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(fit));
    }

    /** Whether this is {@link #RULES}: no weights, the rules decide alone. */
    public boolean byRulesAlone() {
        return weights.isEmpty() && "rules".equals(id);
    }

    /** The model shipped with Engram, fit to the labelled pairs of {@code bench/data/er-pairs.jsonl}. */
    public static MergeModel shipped() {
        MergeModel m = shipped;
        if (m == null) {
            try (InputStream in = MergeModel.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(RESOURCE + " is missing from the class path");
                }
                m = read(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            shipped = m;
        }
        return m;
    }

    /** A model from its JSON form. */
    public static MergeModel read(InputStream in) throws IOException {
        MergeModel m;
        try {
            m = Json.fromBytes(in.readAllBytes(), MergeModel.class);
        } catch (UncheckedIOException e) {
            // Jackson wraps what the constructor refused; the refusal is the message worth showing
            Throwable cause = e;
            while (cause.getCause() != null) {
                cause = cause.getCause();
            }
            throw new IllegalArgumentException("not a merge model: " + cause.getMessage(), e);
        }
        for (String name : m.weights().keySet()) {
            if (!MergeFeatures.NAMES.contains(name)) {
                throw new IllegalArgumentException("the merge model weighs an unknown feature: " + name);
            }
        }
        return m;
    }

    /** The probability that a pair with these features is one referent. */
    public double probability(Map<String, Double> features) {
        double z = intercept;
        for (Map.Entry<String, Double> w : weights.entrySet()) {
            Double x = features.get(w.getKey());
            if (x != null) {
                z += w.getValue() * x;
            }
        }
        return 1 / (1 + Math.exp(-z));
    }

    /**
     * Whether a pair with these features merges by this model: its probability is at least {@link #MERGE_AT} and no
     * constraint withholds the merge ({@link PairRules#withheld}).
     */
    public boolean merges(Map<String, Double> features) {
        return probability(features) >= MERGE_AT && PairRules.withheld(features) == null;
    }

    /** This model with a record of how it was fit. */
    public MergeModel withFit(Map<String, Object> how) {
        return new MergeModel(id, intercept, weights, how);
    }

    /**
     * Fits a logistic model to labelled pairs by Newton's method, with an L2 penalty {@code l2} on every weight but the
     * intercept (which keeps the weights finite when a feature separates the labels, as on a few hundred pairs some
     * do).
     */
    public static MergeModel fit(String id, List<Map<String, Double>> features, List<Boolean> same, double l2) {
        if (features.size() != same.size() || features.isEmpty()) {
            throw new IllegalArgumentException("one label per feature vector, and at least one");
        }
        List<String> names = MergeFeatures.NAMES;
        int d = names.size() + 1;
        int n = features.size();
        double[][] x = new double[n][d];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i][0] = 1;
            for (int j = 1; j < d; j++) {
                x[i][j] = features.get(i).getOrDefault(names.get(j - 1), 0.0);
            }
            y[i] = same.get(i) ? 1 : 0;
        }
        double[] w = new double[d];
        for (int iteration = 0; iteration < 100; iteration++) {
            double[] gradient = new double[d];
            double[][] hessian = new double[d][d];
            for (int i = 0; i < n; i++) {
                double p = 1 / (1 + Math.exp(-dot(w, x[i])));
                double r = p * (1 - p);
                for (int j = 0; j < d; j++) {
                    gradient[j] += (p - y[i]) * x[i][j];
                    for (int k = 0; k < d; k++) {
                        hessian[j][k] += r * x[i][j] * x[i][k];
                    }
                }
            }
            for (int j = 1; j < d; j++) {
                gradient[j] += l2 * w[j];
                hessian[j][j] += l2;
            }
            hessian[0][0] += 1e-9; // a constant label leaves the intercept's curvature at zero
            double[] step = solve(hessian, gradient);
            double largest = 0;
            for (int j = 0; j < d; j++) {
                w[j] -= step[j];
                largest = Math.max(largest, Math.abs(step[j]));
            }
            if (largest < 1e-9) {
                break;
            }
        }
        Map<String, Double> weights = new LinkedHashMap<>();
        for (int j = 1; j < d; j++) {
            weights.put(names.get(j - 1), round(w[j]));
        }
        return new MergeModel(id, round(w[0]), weights, Map.of());
    }

    private static double round(double v) {
        return Math.round(v * 1e6) / 1e6;
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    /** Solves {@code a·x = b} by Gaussian elimination with partial pivoting ({@code a} is positive definite). */
    private static double[] solve(double[][] a, double[] b) {
        int d = b.length;
        List<double[]> rows = new ArrayList<>();
        for (int i = 0; i < d; i++) {
            double[] row = new double[d + 1];
            System.arraycopy(a[i], 0, row, 0, d);
            row[d] = b[i];
            rows.add(row);
        }
        for (int c = 0; c < d; c++) {
            int pivot = c;
            for (int r = c + 1; r < d; r++) {
                if (Math.abs(rows.get(r)[c]) > Math.abs(rows.get(pivot)[c])) {
                    pivot = r;
                }
            }
            Collections.swap(rows, c, pivot);
            double[] top = rows.get(c);
            for (int r = c + 1; r < d; r++) {
                double[] row = rows.get(r);
                double factor = row[c] / top[c];
                for (int k = c; k <= d; k++) {
                    row[k] -= factor * top[k];
                }
            }
        }
        double[] out = new double[d];
        for (int c = d - 1; c >= 0; c--) {
            double[] row = rows.get(c);
            double s = row[d];
            for (int k = c + 1; k < d; k++) {
                s -= row[k] * out[k];
            }
            out[c] = s / row[c];
        }
        return out;
    }
}
