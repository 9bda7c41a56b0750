package dev.engram.service;

/**
 * {@code GET /v1/health}: {@code UP} when both stream applications run, {@code REBALANCING} while they move
 * partitions, {@code DOWN} otherwise; {@code serving} says whether this instance answers queries.
 */
record Health(
        String status,
        boolean serving,
        String streamsState,
        String ingestState,
        String instance,
        String extractor,
        String embedder) {}
