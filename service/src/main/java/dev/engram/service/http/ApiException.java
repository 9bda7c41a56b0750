package dev.engram.service.http;

import dev.engram.query.QueryException;
import org.apache.kafka.streams.errors.InvalidStateStoreException;

/**
 * An HTTP error with a JSON body: {@code {"error": {"code": ..., "message": ...}}}. {@link #of(Throwable)} is the one
 * place where failures become status codes.
 */
public final class ApiException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;
    private final Integer retryAfterSeconds;

    public ApiException(int status, String code, String message) {
        this(status, code, message, null);
    }

    public ApiException(int status, String code, String message, Integer retryAfterSeconds) {
        super(message);
        this.status = status;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public static ApiException badRequest(String message) {
        return new ApiException(400, "bad_request", message);
    }

    static ApiException notFound(String message) {
        return new ApiException(404, "not_found", message);
    }

    public static ApiException unavailable(String message) {
        return new ApiException(503, "unavailable", message, 1);
    }

    static ApiException methodNotAllowed(String allowed) {
        return new ApiException(405, "method_not_allowed", "use " + allowed);
    }

    public static ApiException tooLarge(String message) {
        return new ApiException(413, "too_large", message);
    }

    /** The HTTP error a failure becomes: domain failures by their kind, anything unexpected a 500. */
    public static ApiException of(Throwable failure) {
        return switch (failure) {
            case ApiException api -> api;
            case QueryException q ->
                switch (q.kind()) {
                    case INVALID -> badRequest(q.getMessage());
                    case NOT_FOUND -> notFound(q.getMessage());
                    case UNAVAILABLE -> unavailable(q.getMessage());
                    case NOT_CONFIGURED -> new ApiException(501, "not_configured", q.getMessage());
                    case UPSTREAM_FAILED -> new ApiException(502, "llm_failed", q.getMessage());
                };
            case InvalidStateStoreException e -> unavailable("state is moving between instances: " + e.getMessage());
            default ->
                new ApiException(
                        500, "internal", "internal error: " + failure.getClass().getSimpleName());
        };
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public Integer retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
