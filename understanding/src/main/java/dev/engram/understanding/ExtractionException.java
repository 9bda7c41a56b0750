package dev.engram.understanding;

/** A passage that could not be extracted, with a reason fit for a dead letter. */
public class ExtractionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public ExtractionException(String message) {
        super(message);
    }

    public ExtractionException(String message, Throwable cause) {
        super(message, cause);
    }
}
