package dev.engram.retrieval;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;
import org.apache.lucene.index.DirectoryReader;

/**
 * The reader a snapshot's searches use, shared by its kinds: first the index as the snapshot found it, with what
 * the snapshot has beyond it scanned; once the background has published exactly the snapshot's vectors, the index
 * that holds them, with nothing scanned, so a snapshot that keeps serving (its namespace went quiet) stops paying
 * for the scan.
 */
final class ServedReader {

    /** A reader, and whether it holds exactly the snapshot's vectors (nothing to scan or leave out). */
    record State(DirectoryReader reader, boolean complete) {}

    private volatile State state;
    private boolean released;
    /** Set once a search of this reader failed: the snapshot's searches scan from then on. */
    private volatile boolean broken;

    private final Consumer<Throwable> onDamage;

    ServedReader(DirectoryReader reader, Consumer<Throwable> onDamage) {
        reader.incRef();
        this.state = new State(reader, false);
        this.onDamage = onDamage;
    }

    /** A search of the reader failed: the snapshot scans, and the store hears of it once. */
    void damaged(Throwable cause) {
        if (!broken) {
            broken = true;
            onDamage.accept(cause);
        }
    }

    boolean broken() {
        return broken;
    }

    State state() {
        return state;
    }

    /** Searches from now on use {@code complete}, which holds exactly the snapshot's vectors. */
    void complete(DirectoryReader complete) throws IOException {
        DirectoryReader old;
        synchronized (this) {
            if (released) {
                return;
            }
            complete.incRef();
            old = state.reader();
            state = new State(complete, true);
        }
        old.decRef(); // a search running on it holds a reference of its own
    }

    /** Once: a second release must not close a reader in use. */
    void release() {
        DirectoryReader r;
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
            r = state.reader();
        }
        try {
            r.decRef();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
