package dev.engram.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A route takes the query parameters the OpenAPI document gives it, and no other. */
class QueryParametersTest {

    private static final QueryParameters TAKEN = new QueryParameters(Routes.OPENAPI);

    private static ApiException refused(String method, String template, String... names) {
        Map<String, List<String>> given = new LinkedHashMap<>();
        for (String n : names) {
            given.put(n, List.of("1"));
        }
        return catchThrowableOfType(ApiException.class, () -> TAKEN.check(method, template, given));
    }

    @Test
    void aParameterTheRouteDoesNotTakeIsA400ThatSaysWhichItTakes() {
        String documents = "/v1/namespaces/{ns}/documents";
        assertThat(refused("GET", documents, "status", "limit", "cursor", "order"))
                .isNull();
        ApiException typo = refused("GET", documents, "statuss");
        assertThat(typo.status()).isEqualTo(400);
        assertThat(typo.getMessage())
                .isEqualTo("unknown query parameter 'statuss' (this route takes cursor, limit, order, status)");
        // HEAD is GET without a body, and takes what GET takes
        assertThat(refused("HEAD", documents, "limit")).isNull();
        // a misspelt timeout would have waited the default time; a retrieval's top_k goes in its body
        assertThat(refused("DELETE", documents + "/{id}", "wait", "timeout").getMessage())
                .contains("'timeout'")
                .contains("timeout_ms, wait");
        assertThat(refused("POST", "/v1/namespaces/{ns}/retrieve", "top_k").getMessage())
                .isEqualTo("unknown query parameter 'top_k': this route takes none");
        // the path's own parameters are no query parameters
        assertThat(refused("GET", "/v1/namespaces/{ns}", "ns")).isNotNull();
    }

    @Test
    void aDocumentWithoutPathsIsRefusedRatherThanCheckingNothing() {
        assertThatThrownBy(() -> new QueryParameters("{}")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new QueryParameters("not json")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void routesTheDocumentDoesNotDescribeAreNotChecked() {
        assertThatCode(() -> TAKEN.check("GET", "/echo/{x}", Map.of("anything", List.of("1"))))
                .doesNotThrowAnyException();
        assertThatCode(() -> TAKEN.check("GET", "/v1/namespaces/{ns}/documents", Map.of()))
                .doesNotThrowAnyException();
    }
}
