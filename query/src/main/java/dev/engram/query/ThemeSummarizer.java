package dev.engram.query;

import java.util.List;

/** Writes the summary of a theme from its passages' memories (strongest first); an LLM, when one is configured. */
@FunctionalInterface
public interface ThemeSummarizer {
    String summarize(List<String> memories);
}
