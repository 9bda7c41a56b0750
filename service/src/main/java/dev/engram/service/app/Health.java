package dev.engram.service.app;

/**
 * The health endpoints' body. {@code status}: {@code UP} (both stream applications run), {@code REBALANCING} (they
 * move partitions), {@code STARTING}, {@code FAILING} (running, but stream threads keep failing), {@code DOWN} (an
 * application stopped for good). {@code serving}: this instance answers queries; {@code live} and {@code ready} as
 * {@link StreamHealth} defines them; thread failures are those of the last five minutes.
 */
public record Health(
        String status,
        boolean serving,
        boolean live,
        boolean ready,
        String streamsState,
        String ingestState,
        int memoryThreadFailures,
        int ingestThreadFailures,
        String instance,
        String extractor,
        String embedder) {}
