package dev.engram.retrieval;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Where a namespace's snapshots keep their vectors: appended once, read by a {@code long} handle, never changed or
 * moved while the arena lives, so a snapshot still served after later ones were built reads the values it was built
 * with. On a file, the vectors are in memory-mapped pages the kernel may drop and read back, not in the heap: a
 * namespace of 100k passages has some millions of vectors. The file is scratch, started empty on open and deleted on
 * close: everything in it can be read again from the state stores.
 *
 * <p>Values are appended in chunks that double in size from 64 KiB up to 64 MiB, so that a small namespace holds
 * little; a vector never spans two chunks. A handle packs the chunk, the position in it and the length.
 *
 * <p>Appending is synchronized; reading is not: a handle is only ever read after it was returned by {@link #add}, and
 * whoever passes it on publishes it safely (snapshots are handed to queries through concurrent maps).
 */
public final class VectorArena implements Closeable {

    /** The handle of no vector. */
    public static final long NONE = -1;

    /** The handle of every vector without values: it takes no room, and no real vector's handle is 0. */
    private static final long EMPTY = 0;

    /** At most this many chunks, so that a handle stays positive (about 32 TiB of values). */
    private static final int MAX_CHUNKS = 1 << 19;

    /** The longest vector an arena keeps, in floats. */
    public static final int MAX_LENGTH = (1 << 20) - 1;

    private static final int LENGTH_BITS = 20;
    private static final int POSITION_BITS = 24;
    private static final int FIRST_CHUNK_FLOATS = 16 << 10;
    private static final int LAST_CHUNK_FLOATS = 16 << 20;

    /** The file the chunks are mapped from, or null for chunks on the heap. */
    private final Path file;

    private final FileChannel channel;
    /** The chunks, replaced by a longer copy when one is added (readers see one or the other, both valid). */
    private volatile FloatBuffer[] chunks = new FloatBuffer[0];
    /** The same chunks seen as bytes: where texts are kept ({@link #addBytes}); replaced before {@link #chunks}. */
    private volatile ByteBuffer[] byteChunks = new ByteBuffer[0];
    /** Bytes of the file mapped so far. */
    private long fileBytes;
    /** The next free position in the last chunk. */
    private int position;

    /** Why closing did not delete the file, or null. */
    private IOException deleteFailed;

    /** Why new chunks are on the heap although the arena has a file, or null. */
    private IOException spilled;

    private long appended;
    private long retired;
    private boolean closed;

    private VectorArena(Path file, FileChannel channel) {
        this.file = file;
        this.channel = channel;
    }

    /** An arena whose chunks are on the heap (tests, and namespaces without a directory for their indexes). */
    public static VectorArena onHeap() {
        return new VectorArena(null, null);
    }

    /**
     * An arena mapped from a new file in {@code dir}, named after {@code name}; the file is deleted when the arena is
     * closed. A file is never reused: a mapping of a file another arena shortened would fault when read.
     */
    public static VectorArena mapped(Path dir, String name) {
        try {
            Files.createDirectories(dir);
            // a namespace's name may be long: the file keeps enough of it to be told apart by an operator
            Path file = Files.createTempFile(dir, (name.length() > 64 ? name.substring(0, 64) : name) + "@", ".f32");
            return new VectorArena(file, FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a vector arena in " + dir, e);
        }
    }

    /** Whether the vectors are in a mapped file rather than the heap (all of them: none spilled to the heap). */
    public synchronized boolean mapped() {
        return file != null && spilled == null;
    }

    /** Appends a vector's values; returns its handle ({@link #NONE} for null). */
    public synchronized long add(float[] v) {
        if (v == null) {
            return NONE;
        }
        if (v.length > MAX_LENGTH) {
            throw new IllegalArgumentException("a vector of " + v.length + " values; at most " + MAX_LENGTH);
        }
        if (closed) {
            throw new IllegalStateException("the vector arena is closed");
        }
        if (v.length == 0) {
            return EMPTY;
        }
        long handle = reserve(v.length);
        chunks[(int) (handle >>> (POSITION_BITS + LENGTH_BITS))].put(
                (int) ((handle >>> LENGTH_BITS) & ((1L << POSITION_BITS) - 1)), v);
        return handle;
    }

    /**
     * Appends bytes (a text's, say), which take the room of {@code 1 + ⌈length / 4⌉} floats: their length, then
     * them. Returns their handle, read back by {@link #bytes}; {@link #retire}, {@link #garbage} and copies into
     * another arena treat it as a vector's.
     *
     * @throws IllegalArgumentException past about 4 MiB, the longest a handle holds
     */
    public synchronized long addBytes(byte[] b) {
        int floats = 1 + (b.length + 3) / 4;
        if (floats > MAX_LENGTH) {
            throw new IllegalArgumentException("" + b.length + " bytes; at most " + 4L * (MAX_LENGTH - 1));
        }
        long handle = reserve(floats);
        ByteBuffer chunk = byteChunks[(int) (handle >>> (POSITION_BITS + LENGTH_BITS))];
        int at = 4 * (int) ((handle >>> LENGTH_BITS) & ((1L << POSITION_BITS) - 1));
        chunk.putInt(at, b.length);
        chunk.put(at + 4, b);
        return handle;
    }

    /** The bytes appended as {@code handle} by {@link #addBytes}. */
    public byte[] bytes(long handle) {
        if (length(handle) == 0) {
            throw new IllegalArgumentException("not the handle of bytes: " + handle);
        }
        ByteBuffer chunk = byteChunks[(int) (handle >>> (POSITION_BITS + LENGTH_BITS))];
        int at = 4 * (int) ((handle >>> LENGTH_BITS) & ((1L << POSITION_BITS) - 1));
        byte[] out = new byte[chunk.getInt(at)];
        chunk.get(at + 4, out);
        return out;
    }

    /**
     * The chunk that holds the bytes appended as {@code handle} by {@link #addBytes}, to be read in place with absolute
     * gets from {@link #bytesStart} on, {@link #bytesLength} of them: shared, so never with relative ones. For those who
     * read many such bytes at once, where a copy of each would be garbage.
     */
    ByteBuffer bytesChunk(long handle) {
        if (length(handle) == 0) {
            throw new IllegalArgumentException("not the handle of bytes: " + handle);
        }
        return byteChunks[(int) (handle >>> (POSITION_BITS + LENGTH_BITS))];
    }

    /** Where in its chunk ({@link #bytesChunk}) the bytes of {@code handle} start. */
    static int bytesStart(long handle) {
        return 4 * (int) ((handle >>> LENGTH_BITS) & ((1L << POSITION_BITS) - 1)) + 4;
    }

    /** How many bytes were appended as {@code handle}. */
    int bytesLength(long handle) {
        return bytesChunk(handle).getInt(bytesStart(handle) - 4);
    }

    /** The room of {@code floats} values (more than 0) at the end of the last chunk, or of a new one: their handle. */
    private long reserve(int floats) {
        if (closed) {
            throw new IllegalStateException("the vector arena is closed");
        }
        FloatBuffer[] cs = chunks;
        if (cs.length == 0 || cs[cs.length - 1].capacity() - position < floats) {
            if (cs.length == MAX_CHUNKS) {
                throw new IllegalStateException("the vector arena is full: " + MAX_CHUNKS + " chunks");
            }
            cs = grow(cs, floats);
        }
        int chunk = cs.length - 1;
        long handle = ((long) chunk << (POSITION_BITS + LENGTH_BITS)) | ((long) position << LENGTH_BITS) | floats;
        position += floats;
        appended += floats;
        return handle;
    }

    /** A chunk more, at least {@code length} floats long. */
    private FloatBuffer[] grow(FloatBuffer[] cs, int length) {
        int floats = cs.length == 0
                ? FIRST_CHUNK_FLOATS
                : (int) Math.min(LAST_CHUNK_FLOATS, 2L * cs[cs.length - 1].capacity());
        floats = Math.max(floats, length);
        ByteBuffer chunk = null;
        if (channel != null && spilled == null) {
            try {
                chunk = mappedChunk(4L * floats);
            } catch (IOException e) {
                // a full disk, say: the arena goes on in the heap rather than fail the snapshots
                spilled = e;
            }
        }
        if (chunk == null) {
            chunk = ByteBuffer.allocate(4 * floats).order(ByteOrder.nativeOrder());
        }
        ByteBuffer[] moreBytes = Arrays.copyOf(byteChunks, cs.length + 1);
        moreBytes[cs.length] = chunk;
        byteChunks = moreBytes; // before the floats: a reader of a handle in the new chunk sees both
        FloatBuffer[] more = Arrays.copyOf(cs, cs.length + 1);
        more[cs.length] = chunk.asFloatBuffer();
        chunks = more;
        position = 0;
        return more;
    }

    /**
     * A chunk more of the file, mapped. Its bytes are written (as zeros) before they are mapped, so that a full disk is
     * an exception here rather than a fault when a page of a sparse mapping is first written.
     */
    private ByteBuffer mappedChunk(long bytes) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(bytes, 1 << 20));
        for (long at = 0; at < bytes; ) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - at));
            at += channel.write(zeros, fileBytes + at);
        }
        ByteBuffer chunk =
                channel.map(FileChannel.MapMode.READ_WRITE, fileBytes, bytes).order(ByteOrder.nativeOrder());
        fileBytes += bytes;
        return chunk;
    }

    /**
     * Why the arena keeps its new values in the heap although it has a file (the file could not grow), or null: what
     * its owner reports to the operator.
     */
    public synchronized IOException spilled() {
        return spilled;
    }

    /** How many values a handle's vector has (0 for {@link #NONE}). */
    public static int length(long handle) {
        return handle == NONE ? 0 : (int) (handle & MAX_LENGTH);
    }

    /** A copy of the vector's values; null for {@link #NONE}. */
    public float[] get(long handle) {
        if (handle == NONE) {
            return null;
        }
        float[] out = new float[length(handle)];
        read(handle, out);
        return out;
    }

    /**
     * Reads the vector's values into the start of {@code into}, which is at least as long; nothing for {@link #NONE} or
     * a vector without values.
     */
    public void read(long handle, float[] into) {
        int length = length(handle);
        if (length == 0) {
            return;
        }
        int chunk = (int) (handle >>> (POSITION_BITS + LENGTH_BITS));
        int at = (int) ((handle >>> LENGTH_BITS) & ((1L << POSITION_BITS) - 1));
        chunks[chunk].get(at, into, 0, length);
    }

    /** Counts a vector no longer used by what keeps the arena's handles: what {@link #garbage} reports. */
    public synchronized void retire(long handle) {
        retired += length(handle);
    }

    /** The share of the appended values retired, in [0, 1]. */
    public synchronized double garbage() {
        return appended == 0 ? 0 : (double) retired / appended;
    }

    /** Values appended, in floats. */
    public synchronized long floats() {
        return appended;
    }

    /** Heap the arena's chunks hold: those on the heap (all of them without a file, or after a spill). */
    public long heapBytes() {
        long bytes = 0;
        for (ByteBuffer c : byteChunks) {
            bytes += c.isDirect() ? 0 : 16 + c.capacity();
        }
        return bytes;
    }

    /** Whether the arena is closed: nothing more can be appended. */
    public synchronized boolean closed() {
        return closed;
    }

    /** Why the closed arena's file could not be deleted, or null. */
    public synchronized IOException deleteFailed() {
        return deleteFailed;
    }

    /**
     * Closes the file and deletes it: no more vectors are added. Chunks already mapped stay readable until nothing
     * refers to them (a snapshot still served reads on), as a mapping outlives its file's name and channel.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (channel != null) {
            try {
                channel.close();
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // a mapped file that cannot be deleted yet (so on Windows): the next start clears it
                deleteFailed = e;
            }
        }
    }
}
