package dev.engram.query;

/**
 * Why a query could not be answered, as the read side sees it; the HTTP layer maps each {@link Kind} to a status code
 * in one place.
 */
public final class QueryException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** What went wrong, independent of the protocol that reports it. */
    public enum Kind {
        /** The request asks for something that cannot be valid (a bad parameter, an unknown mode). */
        INVALID,
        /** The namespace, document or entity is not in memory. */
        NOT_FOUND,
        /** The state is not queryable here right now (starting, rebalancing, moving); retrying will help. */
        UNAVAILABLE,
        /** This instance lacks what the request needs (an LLM, a command producer). */
        NOT_CONFIGURED,
        /** A service the query depends on (the LLM) failed. */
        UPSTREAM_FAILED
    }

    private final Kind kind;

    public QueryException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    public static QueryException invalid(String message) {
        return new QueryException(Kind.INVALID, message);
    }

    public static QueryException notFound(String message) {
        return new QueryException(Kind.NOT_FOUND, message);
    }

    public static QueryException unavailable(String message) {
        return new QueryException(Kind.UNAVAILABLE, message);
    }

    public static QueryException notConfigured(String message) {
        return new QueryException(Kind.NOT_CONFIGURED, message);
    }

    public static QueryException upstreamFailed(String message) {
        return new QueryException(Kind.UPSTREAM_FAILED, message);
    }
}
