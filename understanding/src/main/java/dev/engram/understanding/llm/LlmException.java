package dev.engram.understanding.llm;

/** A call to the LLM API that failed for good (after retries, or with a non-retryable status). */
public final class LlmException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;

    public LlmException(String message, int status, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    /** The last HTTP status, or -1 when there was no response. */
    public int status() {
        return status;
    }

    /** Whether the same call may succeed later: no response (timeout, connection), 429 or a 5xx. */
    public boolean retryable() {
        return status == -1 || status == 429 || status / 100 == 5;
    }
}
