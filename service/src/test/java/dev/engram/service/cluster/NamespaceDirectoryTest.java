package dev.engram.service.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.List;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Test;

class NamespaceDirectoryTest {

    private static final HostInfo SELF = new HostInfo("127.0.0.1", 1);

    /** A port nothing listens on: bound, then released. */
    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void anInstanceThatDoesNotAnswerMakesTheListIncompleteAndIsNamed() throws IOException {
        HostInfo gone = new HostInfo("127.0.0.1", closedPort());
        NamespaceDirectory directory =
                new NamespaceDirectory(() -> List.of("b", "a"), () -> List.of(SELF, gone, gone), SELF);

        NamespaceDirectory.Listing all = directory.list(false, null);

        assertThat(all.namespaces()).containsExactly("a", "b");
        assertThat(all.instances()).as("itself and the one other instance").isEqualTo(2);
        assertThat(all.incomplete()).isTrue();
        assertThat(all.unreachable()).containsExactly("127.0.0.1:" + gone.port());
    }

    @Test
    void itsOwnNamespacesAloneAskNoOne() {
        NamespaceDirectory directory = new NamespaceDirectory(
                () -> List.of("z", "a"),
                () -> {
                    throw new AssertionError("a local listing asks no other instance");
                },
                SELF);

        NamespaceDirectory.Listing own = directory.list(true, null);

        assertThat(own.namespaces()).containsExactly("a", "z");
        assertThat(own.incomplete()).isFalse();
    }
}
