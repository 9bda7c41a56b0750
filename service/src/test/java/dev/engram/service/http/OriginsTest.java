package dev.engram.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class OriginsTest {

    @Test
    void pagesOfThisMachineAndOfTheAdvertisedHostAreAllowedOthersAreNot() {
        Origins o = Origins.local("engram.internal");
        assertThat(o.allows(null, "anything", false)).as("not a browser").isTrue();
        for (String ok : new String[] {
            "http://localhost:8080",
            "http://127.0.0.1",
            "http://127.8.9.1:3000",
            "http://[::1]:8080",
            "http://app.localhost",
            "https://engram.internal",
            "http://ENGRAM.internal:8080"
        }) {
            assertThat(o.allows(ok, "evil.example:8080", false)).as(ok).isTrue();
        }
        for (String no : new String[] {
            "http://evil.example",
            "null",
            "",
            "file:///tmp/x.html",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example",
            "not a uri at all",
            "http://engram.internal.evil.example"
        }) {
            assertThat(o.allows(no, "engram.internal:8080", false)).as(no).isFalse();
        }
    }

    /**
     * A page of the very origin the request goes to is allowed with keys required, and without keys only at an IP
     * address: at a name, it could be a page of an attacker's domain that resolves to this instance (DNS rebinding).
     */
    @Test
    void theRequestsOwnOriginIsAllowedWithKeysOrAtAnIpAddress() {
        Origins o = Origins.local("localhost");
        assertThat(o.allows("http://engram.lan:8080", "engram.lan:8080", true)).isTrue();
        assertThat(o.allows("https://engram.lan", "engram.lan", true)).isTrue();
        assertThat(o.allows("http://engram.lan:8080", "engram.lan:8080", false)).isFalse();
        assertThat(o.allows("http://engram.lan:8081", "engram.lan:8080", true)).isFalse();
        assertThat(o.allows("http://other.lan:8080", "engram.lan:8080", true)).isFalse();
        assertThat(o.allows("http://10.0.0.5:8081", "10.0.0.5:8081", false)).isTrue();
        assertThat(o.allows("http://[fd00::5]:8081", "[fd00::5]:8081", false)).isTrue();
        assertThat(o.allows("http://10.0.0.5:8081", "10.0.0.6:8081", false)).isFalse();
        // behind a proxy that rewrites Host, with keys: the proxy's forwarded host
        assertThat(o.allows("https://engram.company.com", "engram:8080", "engram.company.com", true))
                .isTrue();
        assertThat(o.allows("https://engram.company.com", "engram:8080", "engram.company.com", false))
                .as("a page can set that header itself")
                .isFalse();
    }

    @Test
    void aConfiguredOriginMustBeOne() {
        assertThat(Origins.checked("https://app.example.com")).isEqualTo("https://app.example.com");
        assertThat(Origins.checked("http://tools.example:3000/")).isEqualTo("http://tools.example:3000/");
        assertThat(Origins.checked("*")).isEqualTo("*");
        for (String bad :
                new String[] {"app.example.com", "ftp://x", "https://x/path", "https://u@x", "https://", "x y"}) {
            assertThatThrownBy(() -> Origins.checked(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void configuredOriginsAndTheWildcard() {
        Origins o = new Origins("localhost", List.of("https://app.example.com:443/", " http://tools.example:3000"));
        assertThat(o.allows("https://app.example.com", "engram:8080", false)).isTrue();
        assertThat(o.allows("http://tools.example:3000", "engram:8080", false)).isTrue();
        assertThat(o.allows("http://app.example.com", "engram:8080", false))
                .as("another scheme")
                .isFalse();
        assertThat(o.allows("http://tools.example:3001", "engram:8080", false)).isFalse();
        assertThat(new Origins("localhost", List.of("*")).allows("http://evil.example", "x", false))
                .isTrue();
    }

    @Test
    void aKeylessInstanceAnswersToIpAddressesLoopbackItsAdvertisedAndConfiguredNames() {
        Origins o = new Origins(
                "engram-1.", List.of("https://app.example.com"), List.of("engram.lan", "Proxy.Example", "fqdn.lan."));
        for (String ok : new String[] {
            null,
            "",
            "localhost",
            "localhost:8080",
            "LOCALHOST.",
            "app.localhost:3000",
            "127.0.0.1:8080",
            "10.0.0.7",
            "[::1]:8080",
            "[fd00::5]",
            "engram-1:8080",
            "engram.lan",
            "proxy.example:443",
            "app.example.com",
            "fqdn.lan",
            "fqdn.lan.:8080",
            "[fe80::1%eth0]:8080",
            "[::ffff:127.0.0.1]"
        }) {
            assertThat(o.allowsHost(ok)).as(String.valueOf(ok)).isTrue();
        }
        for (String no : new String[] {
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
            "engram-1.evil.example",
            "[::1]evil",
            "[evil.example]",
            "[]",
            "[::1]:80:80",
            "10.0.0.7.nip.io"
        }) {
            assertThat(o.allowsHost(no)).as(no).isFalse();
        }
        assertThat(new Origins("localhost", List.of(), List.of("*")).allowsHost("evil.example"))
                .isTrue();
        assertThat(Origins.checkedHost("engram.example.com")).isEqualTo("engram.example.com");
        for (String bad : new String[] {"http://x", "x y", "x:80", "-x", ""}) {
            assertThatThrownBy(() -> Origins.checkedHost(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    /** A Host header of colons at the header size limit, which takes a backtracking engine quadratic time. */
    @Test
    void hostileHostHeadersAreJudgedInLinearTime() {
        Origins o = new Origins("localhost", List.of(), List.of());
        String[] hostile = {
            "[" + ":".repeat(64 * 1024), "[" + ":".repeat(64 * 1024) + "]x", "1." + "1.".repeat(32 * 1024)
        };
        for (String host : hostile) {
            assertThat(assertTimeoutPreemptively(Duration.ofSeconds(10), () -> o.allowsHost(host)))
                    .isFalse();
        }
    }
}
