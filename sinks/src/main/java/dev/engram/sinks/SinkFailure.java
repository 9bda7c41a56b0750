package dev.engram.sinks;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.neo4j.driver.exceptions.ClientException;
import org.neo4j.driver.exceptions.DatabaseException;
import org.neo4j.driver.exceptions.Neo4jException;
import org.neo4j.driver.exceptions.RetryableException;

/**
 * Whether a mirror's failure may pass (retry, then pause) or is the store rejecting the data (undo and compensate). Only
 * an explicit rejection is permanent: a failure we cannot classify pauses the sink rather than losing a write.
 */
final class SinkFailure {

    private SinkFailure() {}

    /** True when the store rejected the data itself: retrying the same write cannot succeed. */
    static boolean permanent(Throwable t) {
        Throwable e = unwrap(t);
        if (e instanceof StatusRuntimeException s) {
            Status.Code code = s.getStatus().getCode();
            return code == Status.Code.INVALID_ARGUMENT
                    || code == Status.Code.FAILED_PRECONDITION
                    || code == Status.Code.OUT_OF_RANGE
                    || code == Status.Code.NOT_FOUND
                    || code == Status.Code.ALREADY_EXISTS;
        }
        if (e instanceof RetryableException) {
            return false;
        }
        if (e instanceof ClientException c) {
            // only what Neo4j says about the statement or the data; a pool timeout ("N/A"), a missing database, a
            // terminated transaction or a security error is no rejection of the data
            String code = c.code() == null ? "" : c.code();
            return code.startsWith("Neo.ClientError.Statement.")
                    || code.equals("Neo.ClientError.Schema.ConstraintValidationFailed")
                    || code.startsWith("Neo.ClientError.Request.Invalid");
        }
        if (e instanceof DatabaseException d) {
            // the statement failed on this data (say, an id too long for Neo4j to index): the same write fails again.
            // Should Neo4j fail every statement so, the sink compensates what it could not write and memory's repair
            // brings it back once Neo4j is fixed.
            return "Neo.DatabaseError.Statement.ExecutionFailed".equals(d.code());
        }
        return false;
    }

    /** Whether a failure depends on the size of the write. */
    enum Size {
        /** No: a smaller write fails alike. */
        NONE,
        /** Surely: the write is over a limit of the store (a request over Qdrant's size, a transaction's memory). */
        SURELY,
        /** Perhaps: a deadline or a transaction timeout, which a smaller write may meet, or a stalled store may not. */
        MAYBE
    }

    /** How a failure depends on the size of the write that failed. */
    static Size sizeBound(Throwable t) {
        Throwable e = unwrap(t);
        if (e instanceof StatusRuntimeException s) {
            return switch (s.getStatus().getCode()) {
                case RESOURCE_EXHAUSTED -> Size.SURELY;
                case DEADLINE_EXCEEDED -> Size.MAYBE;
                default -> Size.NONE;
            };
        }
        if (e instanceof Neo4jException n) {
            String code = n.code() == null ? "" : n.code();
            String message = n.getMessage() == null ? "" : n.getMessage();
            if (message.contains("db.memory.transaction.max threshold")
                    || code.equals("Neo.TransientError.General.TransactionMemoryLimit")) {
                return Size.SURELY; // this transaction's own limit
            }
            if (code.startsWith("Neo.ClientError.Transaction.TransactionTimedOut")
                    || code.equals("Neo.TransientError.General.MemoryPoolOutOfMemoryError")) {
                return Size.MAYBE; // a pool shared with other transactions, or a timeout
            }
        }
        return Size.NONE;
    }

    /** A short reason for compensations and logs. */
    static String reason(Throwable t) {
        Throwable e = unwrap(t);
        return abbreviated(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
    }

    /** At most 500 characters of {@code text}, for logs (an id or a message may be as long as a record). */
    static String abbreviated(String text) {
        return text.length() > 500 ? text.substring(0, 497) + "..." : text;
    }

    static Throwable unwrap(Throwable t) {
        Throwable e = t;
        while ((e instanceof ExecutionException || e instanceof CompletionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
