package dev.engram.service;

/** An HTTP error with a JSON body: {@code {"error": {"code": ..., "message": ...}}}. */
final class ApiException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;
    private final Integer retryAfterSeconds;

    ApiException(int status, String code, String message) {
        this(status, code, message, null);
    }

    ApiException(int status, String code, String message, Integer retryAfterSeconds) {
        super(message);
        this.status = status;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    static ApiException badRequest(String message) {
        return new ApiException(400, "bad_request", message);
    }

    static ApiException notFound(String message) {
        return new ApiException(404, "not_found", message);
    }

    static ApiException unavailable(String message) {
        return new ApiException(503, "unavailable", message, 1);
    }

    int status() {
        return status;
    }

    String code() {
        return code;
    }

    Integer retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
