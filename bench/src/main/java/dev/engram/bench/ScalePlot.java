package dev.engram.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The scale benchmark's plot: each mode's p99 against the namespace's size, with three times dense's as the goal. */
final class ScalePlot {

    private ScalePlot() {}

    /** The plot of an earlier run's results ({@code by_size} of its JSON), without running it again. */
    static void replot(Path results, Path png) throws IOException {
        JsonNode earlier = Json.mapper().readTree(results.toFile());
        List<Map<String, Object>> rows = new ArrayList<>();
        List<String> seen = new ArrayList<>();
        for (JsonNode r : earlier.path("by_size")) {
            rows.add(Map.of(
                    "passages", r.path("passages").asLong(),
                    "mode", r.path("mode").asText(),
                    "p99_ms", r.path("p99_ms").asDouble()));
            if (!seen.contains(r.path("mode").asText())) {
                seen.add(r.path("mode").asText());
            }
        }
        plot(rows, seen, png);
    }

    static void plot(List<Map<String, Object>> bySize, List<String> modes, Path png) throws IOException {
        XYChart chart = new XYChartBuilder()
                .width(900)
                .height(500)
                .title("Query latency p99 against namespace size")
                .xAxisTitle("passages in the namespace")
                .yAxisTitle("p99 (ms)")
                .build();
        // sizes a decade apart on a logarithmic axis; latencies on a linear one from 0, labelled, with the goal drawn
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisDecimalPattern("0");
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        for (String mode : modes) {
            List<Map<String, Object>> rows =
                    bySize.stream().filter(r -> r.get("mode").equals(mode)).toList();
            chart.addSeries(
                    mode,
                    rows.stream()
                            .mapToDouble(r -> ((Number) r.get("passages")).doubleValue())
                            .toArray(),
                    rows.stream().mapToDouble(r -> (Double) r.get("p99_ms")).toArray());
        }
        List<Map<String, Object>> dense =
                bySize.stream().filter(r -> r.get("mode").equals("dense")).toList();
        if (!dense.isEmpty()) {
            XYSeries goal = chart.addSeries(
                    "3 × dense (goal)",
                    dense.stream()
                            .mapToDouble(r -> ((Number) r.get("passages")).doubleValue())
                            .toArray(),
                    dense.stream()
                            .mapToDouble(r -> 3 * (Double) r.get("p99_ms"))
                            .toArray());
            goal.setLineStyle(SeriesLines.DASH_DASH);
            goal.setMarker(SeriesMarkers.NONE);
            goal.setLineColor(Color.GRAY);
        }
        BitmapEncoder.saveBitmap(chart, png.toString().replaceFirst("\\.png$", ""), BitmapEncoder.BitmapFormat.PNG);
    }
}
