package dev.engram.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One keep-alive HTTP/1.1 connection per client that sends each POST — headers and body — in one write, with
 * TCP_NODELAY, as curl and most clients do, so that what is measured is the server's time and not a client's way of
 * writing. Replies must carry a Content-Length (the API's do). Not thread-safe: one per client thread.
 */
final class OneWriteClient implements AutoCloseable {

    private final String host;
    private final int port;
    private Socket socket;
    private InputStream in;
    private OutputStream out;

    OneWriteClient(String host, int port) {
        this.host = host;
        this.port = port;
    }

    /** POSTs a JSON body to {@code path}; the status, or 599 when no answer came. */
    int post(String path, String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        byte[] head = ("POST " + path + " HTTP/1.1\r\nHost: " + host + ":" + port
                        + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[head.length + body.length];
        System.arraycopy(head, 0, request, 0, head.length);
        System.arraycopy(body, 0, request, head.length, body.length);
        for (int attempt = 0; attempt < 2; attempt++) {
            try {
                if (socket == null) {
                    socket = new Socket();
                    socket.setTcpNoDelay(true);
                    socket.setSoTimeout(120_000);
                    socket.connect(new InetSocketAddress(host, port), 2_000);
                    in = new BufferedInputStream(socket.getInputStream());
                    out = socket.getOutputStream();
                }
                out.write(request);
                out.flush();
                return readReply();
            } catch (IOException e) {
                close(); // the server closed a kept-alive connection: once more on a new one
            }
        }
        return 599;
    }

    private int readReply() throws IOException {
        String status = line();
        int code = Integer.parseInt(status.substring(9, 12));
        long length = -1;
        boolean close = false;
        for (String h = line(); !h.isEmpty(); h = line()) {
            String lower = h.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                length = Long.parseLong(h.substring(15).strip());
            } else if (lower.startsWith("connection:") && lower.contains("close")) {
                close = true;
            }
        }
        if (length < 0) {
            length = 0; // the API sends no body only without a length
        }
        in.skipNBytes(length);
        if (close) {
            close();
        }
        return code;
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            if (c != '\r') {
                b.write(c);
            }
        }
        return b.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        socket = null;
    }
}
