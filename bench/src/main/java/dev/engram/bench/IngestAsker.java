package dev.engram.bench;

import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/** Asks a dense and a hybrid question {@code perSecond} times a second until stopped. */
final class IngestAsker implements Runnable {
    final AtomicBoolean stop = new AtomicBoolean();
    final Map<String, List<Double>> latencies = new LinkedHashMap<>();
    private final String base;
    private final List<String> questions;
    private final double perSecond;

    IngestAsker(String base, List<String> questions, double perSecond) {
        this.base = base;
        this.questions = questions;
        this.perSecond = perSecond;
    }

    @Override
    public void run() {
        HttpClient http = HttpClient.newHttpClient();
        int i = 0;
        long spacing = (long) (1e9 / perSecond);
        long next = System.nanoTime();
        while (!stop.get()) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                try {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            next += spacing;
            for (String mode : List.of("dense", "hybrid")) {
                try {
                    double ms = ScaleRequests.retrieve(http, base, mode, questions.get(i % questions.size()));
                    latencies.computeIfAbsent(mode, k -> new ArrayList<>()).add(ms);
                } catch (Exception e) {
                    latencies
                            .computeIfAbsent(mode + "_failed", k -> new ArrayList<>())
                            .add(0.0);
                }
            }
            i++;
        }
    }
}
