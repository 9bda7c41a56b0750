package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.engram.schemas.Json;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.http.ApiKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The deployment files checked statically, since no Docker engine runs where the tests do: the compose stack, the
 * Dockerfile, Prometheus' configuration and alert rules, and the Grafana dashboard. Anchors and merge keys are resolved
 * by a YAML parser, as compose resolves them.
 */
class DeploymentFilesTest {

    private static final Path ROOT = Path.of("..");
    private static final String IMAGE = "engram:latest";

    @SuppressWarnings("unchecked")
    private static Map<String, Object> yaml(String file) throws IOException {
        return (Map<String, Object>) new Yaml().load(interpolated(Files.readString(ROOT.resolve(file))));
    }

    /** The secrets a user's .env gives compose (the README shows how to make one), here made up for the test. */
    private static final Map<String, String> DOT_ENV = Map.of(
            "ENGRAM_API_KEY", "admin-secret-0123456789abcdef",
            "ENGRAM_METRICS_KEY", "metrics-secret-0123456789abcdef",
            "NEO4J_PASSWORD", "neo4j-secret-0123456789abcdef",
            "QDRANT_API_KEY", "qdrant-secret-0123456789abcdef",
            "GRAFANA_ADMIN_PASSWORD", "grafana-secret-0123456789abcdef");

    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Z0-9_]+)(:\\?[^}]*)?}");

    /** {@code text} with its {@code ${VAR}} and {@code ${VAR:?message}} replaced as compose does from {@link #DOT_ENV}. */
    private static String interpolated(String text) {
        Matcher m = VARIABLE.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = DOT_ENV.get(m.group(1));
            assertThat(value)
                    .as("${%s} is one of the variables the README's .env gives", m.group(1))
                    .isNotNull();
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        return m.appendTail(out).toString();
    }

    /**
     * Secure by default: ports on 127.0.0.1 only, authentication on, and every key and password from the user's .env,
     * each required (compose stops with the README's hint when one is missing), none written in the file.
     */
    @Test
    void theComposeStackServesThisMachineOnlyAndTakesEveryKeyAndPasswordFromDotEnv() throws IOException {
        String raw = Files.readString(ROOT.resolve("docker-compose.yml"));
        assertThat((Object) new Yaml().load(raw))
                .as("valid YAML before compose interpolates it")
                .isNotNull();
        Set<String> required = new TreeSet<>();
        Matcher m = VARIABLE.matcher(raw);
        while (m.find()) {
            assertThat(m.group(2))
                    .as("${%s} is required, with a hint", m.group(1))
                    .startsWith(":?");
            required.add(m.group(1));
        }
        assertThat(required).isEqualTo(new TreeSet<>(DOT_ENV.keySet()));
        for (String secret : DOT_ENV.values()) {
            assertThat(raw).doesNotContain(secret);
        }
        assertThat(raw).doesNotContain("engram-local").doesNotContain("ENGRAM_AUTH");

        services().forEach((name, s) -> {
            for (Object port : list(map(s).get("ports"))) {
                assertThat(port.toString())
                        .as("%s publishes %s on this machine only", name, port)
                        .startsWith("127.0.0.1:");
            }
        });
        Map<String, Object> neo4j = map(services().get("neo4j"));
        assertThat(map(neo4j.get("environment")).get("NEO4J_AUTH")).isEqualTo("neo4j/" + DOT_ENV.get("NEO4J_PASSWORD"));
        assertThat(map(map(services().get("qdrant")).get("environment")).get("QDRANT__SERVICE__API_KEY"))
                .isEqualTo(DOT_ENV.get("QDRANT_API_KEY"));
        for (String name : engramInstances(services())) {
            Map<String, String> env = new HashMap<>();
            map(map(services().get(name)).get("environment")).forEach((k, v) -> env.put(k, String.valueOf(v)));
            EngramConfig config = EngramConfig.from(env);
            assertThat(config.security().enabled()).as(name + " asks for keys").isTrue();
            ApiKeys keys = new ApiKeys(config.security().keys());
            assertThat(keys.authenticate(DOT_ENV.get("ENGRAM_API_KEY"))
                            .orElseThrow()
                            .role())
                    .isEqualTo(ApiKeys.Role.ADMIN);
            assertThat(keys.authenticate(DOT_ENV.get("ENGRAM_METRICS_KEY"))
                            .orElseThrow()
                            .allNamespaces())
                    .isTrue();
        }
        assertThat(map(map(services().get("seed")).get("environment")).get("ENGRAM_API_KEY"))
                .isEqualTo(DOT_ENV.get("ENGRAM_API_KEY"));
        // Prometheus scrapes with the metrics key, from a compose secret
        assertThat(list(map(services().get("prometheus")).get("secrets"))).containsExactly("engram_metrics_key");
        assertThat(map(map(yaml("docker-compose.yml").get("secrets")).get("engram_metrics_key"))
                        .get("environment"))
                .isEqualTo("ENGRAM_METRICS_KEY");
        Map<String, Object> job = map(
                list(yaml("prometheus/prometheus.yml").get("scrape_configs")).get(0));
        assertThat(map(job.get("authorization")).get("credentials_file")).isEqualTo("/run/secrets/engram_metrics_key");
        // the README makes the .env with every variable, and git never keeps it
        String readme = Files.readString(ROOT.resolve("README.md"));
        for (String variable : DOT_ENV.keySet()) {
            assertThat(readme).as("the README's .env gives " + variable).contains(variable + "=");
        }
        assertThat(Files.readAllLines(ROOT.resolve(".gitignore"))).contains(".env");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return o == null ? Map.of() : (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o) {
        return o == null ? List.of() : (List<Object>) o;
    }

    private static Map<String, Object> services() throws IOException {
        return map(yaml("docker-compose.yml").get("services"));
    }

    private static List<String> engramInstances(Map<String, Object> services) {
        List<String> out = new ArrayList<>();
        services.forEach((name, s) -> {
            if (IMAGE.equals(map(s).get("image")) && !map(s).containsKey("command")) {
                out.add(name);
            }
        });
        return out;
    }

    @Test
    void theComposeStackRunsEveryPartWithHealthChecksRestartsAndVolumes() throws IOException {
        Map<String, Object> compose = yaml("docker-compose.yml");
        Map<String, Object> services = services();
        assertThat(services)
                .containsKeys("kafka", "neo4j", "qdrant", "engram-1", "engram-2", "seed", "prometheus", "grafana");
        Set<String> declaredVolumes = map(compose.get("volumes")).keySet();

        for (Map.Entry<String, Object> e : services.entrySet()) {
            String name = e.getKey();
            Map<String, Object> s = map(e.getValue());
            assertThat(s.get("restart")).as(name + " restarts by itself").isNotNull();
            if (!name.equals("seed")) {
                assertThat(map(s.get("healthcheck")).get("test"))
                        .as(name + " has a health check")
                        .isNotNull();
            }
            for (Object v : list(s.get("volumes"))) {
                String source = v.toString().split(":")[0];
                if (source.startsWith("./")) {
                    assertThat(ROOT.resolve(source))
                            .as(name + " mounts a file of the repository")
                            .exists();
                } else {
                    assertThat(declaredVolumes)
                            .as(name + " uses a declared volume")
                            .contains(source);
                }
            }
            // every service it waits for exists
            assertThat(services.keySet()).containsAll(map(s.get("depends_on")).keySet());
        }
        for (String stateful : List.of("kafka", "neo4j", "qdrant", "engram-1", "engram-2", "prometheus")) {
            assertThat(list(map(services.get(stateful)).get("volumes")))
                    .as(stateful + " keeps its data in a volume")
                    .anySatisfy(v -> assertThat(v.toString()).doesNotStartWith("./"));
        }
        assertThat(map(map(services.get("kafka")).get("environment")).get("KAFKA_PROCESS_ROLES"))
                .as("KRaft, no ZooKeeper")
                .isEqualTo("broker,controller");
    }

    @Test
    void theEngramImageIsBuiltOnceAndEveryInstanceIsConfiguredValidly() throws IOException {
        Map<String, Object> services = services();
        List<String> built = new ArrayList<>();
        services.forEach((name, s) -> {
            if (map(s).containsKey("build")) {
                built.add(name);
            }
        });
        assertThat(built).as("one service builds the image").hasSize(1);
        assertThat(map(services.get(built.get(0))).get("image")).isEqualTo(IMAGE);
        services.forEach((name, s) -> {
            if (IMAGE.equals(map(s).get("image")) && !built.contains(name)) {
                assertThat(map(s).get("pull_policy"))
                        .as(name + " uses the built image, never a pulled one")
                        .isEqualTo("never");
            }
        });

        List<String> instances = engramInstances(services);
        assertThat(instances).containsExactly("engram-1", "engram-2");
        String readme = Files.readString(ROOT.resolve("README.md"));
        Set<String> hosts = new TreeSet<>();
        for (String name : instances) {
            Map<String, String> env = new HashMap<>();
            map(map(services.get(name)).get("environment")).forEach((k, v) -> env.put(k, String.valueOf(v)));
            // the configuration the instance starts with is valid, and every variable it sets is documented
            EngramConfig config = EngramConfig.from(env);
            assertThat(config.http().port()).isEqualTo(8080);
            for (String variable : env.keySet()) {
                assertThat(readme)
                        .as(variable + " is in the README's configuration table")
                        .contains("`" + variable + "`");
            }
            assertThat(env.get("ENGRAM_ADVERTISED_HOST"))
                    .as("peers reach %s by its service name", name)
                    .isEqualTo(name);
            hosts.add(name + ":8080");
            assertThat(env).containsKeys("ENGRAM_NEO4J_URI", "ENGRAM_QDRANT_URL", "ENGRAM_INSTANCE_ID");
        }
        assertThat(instances.stream()
                        .map(n -> map(map(services.get(n)).get("environment")).get("ENGRAM_APPLICATION_ID"))
                        .distinct())
                .as("one application id: the instances share the partitions")
                .hasSize(1);

        // Prometheus scrapes exactly the instances and loads the alert rules it is given
        Map<String, Object> prometheus = yaml("prometheus/prometheus.yml");
        Set<String> targets = new TreeSet<>();
        for (Object job : list(prometheus.get("scrape_configs"))) {
            for (Object sc : list(map(job).get("static_configs"))) {
                list(map(sc).get("targets")).forEach(t -> targets.add(t.toString()));
            }
        }
        assertThat(targets).isEqualTo(hosts);
        assertThat(list(prometheus.get("rule_files"))).containsExactly("/etc/prometheus/alerts.yml");
    }

    @Test
    void theSeedingServiceSendsTheDemoDocumentsOnceTheInstancesAreHealthy() throws IOException {
        Map<String, Object> seed = map(services().get("seed"));
        List<String> command =
                list(seed.get("command")).stream().map(Object::toString).toList();
        assertThat(command.get(0)).isEqualTo("ingest");
        assertThat(command)
                .containsSubsequence("--namespace", "demo")
                .containsSubsequence("--url", "http://engram-1:8080");
        String file = command.get(command.size() - 1);
        assertThat(file).isEqualTo("/app/demo/documents.jsonl");
        map(seed.get("depends_on"))
                .forEach((service, condition) -> assertThat(map(condition).get("condition"))
                        .as("seed waits for " + service)
                        .isEqualTo("service_healthy"));
        assertThat(map(seed.get("depends_on")).keySet()).containsAll(engramInstances(services()));
        assertThat(seed.get("restart").toString()).startsWith("on-failure");

        // the image holds the file, copied from the demo's own documents, which the ingest command accepts
        String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
        Matcher copy =
                Pattern.compile("(?m)^COPY (\\S+) " + Pattern.quote(file) + "$").matcher(dockerfile);
        assertThat(copy.find()).as("the Dockerfile copies " + file).isTrue();
        Path documents = ROOT.resolve(copy.group(1));
        assertThat(documents).exists();
        for (String line : Files.readAllLines(documents)) {
            JsonNode doc = Json.mapper().readTree(line);
            assertThat(doc.path("namespace").asText()).isEqualTo("demo");
            assertThat(doc.path("id").asText()).isNotBlank();
            assertThat(doc.path("text").asText()).isNotBlank();
        }
    }

    @Test
    void theDockerfileBuildsEveryModuleWithACachedRepositoryAndRunsAsAnUnprivilegedUser() throws IOException {
        String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
        String pom = Files.readString(ROOT.resolve("pom.xml"));
        Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(pom);
        int modules = 0;
        while (module.find()) {
            modules++;
            assertThat(dockerfile)
                    .as("the image builds module " + module.group(1))
                    .containsPattern("(?m)^COPY " + Pattern.quote(module.group(1)) + " ");
        }
        assertThat(modules).isGreaterThan(5);
        assertThat(dockerfile).contains("--mount=type=cache,target=/root/.m2");
        String runtime = dockerfile.substring(dockerfile.lastIndexOf("\nFROM "));
        Matcher user = Pattern.compile("(?m)^USER (\\S+)$").matcher(runtime);
        assertThat(user.find()).as("the runtime stage sets a user").isTrue();
        assertThat(user.group(1)).isNotIn("root", "0");
        assertThat(runtime).contains("HEALTHCHECK").contains("/v1/health/ready");
        // the command's words reach EngramMain: "run" by default, "ingest …" for the seeding service
        assertThat(runtime).containsPattern("(?m)^ENTRYPOINT \\[.*EngramMain \\\\\"\\$@\\\\\"\", \"engram\"]$");
        assertThat(runtime).containsPattern("(?m)^CMD \\[\"run\"]$");
    }

    @Test
    void theAlertRulesAndTheDashboardAreComplete() throws IOException {
        for (Object group : list(yaml("prometheus/alerts.yml").get("groups"))) {
            for (Object r : list(map(group).get("rules"))) {
                Map<String, Object> rule = map(r);
                String alert = String.valueOf(rule.get("alert"));
                assertThat(rule.get("expr")).as(alert).isNotNull();
                assertThat(map(rule.get("labels")).get("severity")).as(alert).isNotNull();
                assertThat(map(rule.get("annotations")).get("summary"))
                        .as(alert)
                        .isNotNull();
            }
        }
        Set<String> alerts = new TreeSet<>();
        for (Object group : list(yaml("prometheus/alerts.yml").get("groups"))) {
            list(map(group).get("rules")).forEach(r -> alerts.add(String.valueOf(map(r).get("alert"))));
        }
        assertThat(alerts)
                .as("stalled ingest, dead-letter spikes, sink pauses, drift")
                .contains("EngramIngestStalled", "EngramDeadLetterSpike", "EngramMirrorPaused");
        assertThat(alerts.stream().filter(a -> a.contains("Drift"))).isNotEmpty();

        JsonNode dashboard = Json.mapper()
                .readTree(ROOT.resolve("grafana/dashboards/engram.json").toFile());
        Set<String> variables = new TreeSet<>();
        dashboard
                .path("templating")
                .path("list")
                .forEach(v -> variables.add(v.path("name").asText()));
        assertThat(variables).contains("instance", "namespace");
        Set<String> titles = new TreeSet<>();
        for (JsonNode panel : dashboard.path("panels")) {
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            String title = panel.path("title").asText();
            titles.add(title);
            assertThat(panel.path("description").asText())
                    .as(title + " has a description")
                    .isNotBlank();
            for (JsonNode target : panel.path("targets")) {
                String expr = target.path("expr").asText();
                assertThat(expr).as(title).contains("instance=~\"$instance\"");
                // latency is read from histograms: a mean of a timer hides the tail
                if (title.toLowerCase(Locale.ROOT).contains("latency")) {
                    assertThat(expr).as(title).contains("histogram_quantile");
                }
            }
        }
        assertThat(titles)
                .anyMatch(t -> t.startsWith("Documents by status"))
                .anyMatch(t -> t.startsWith("LLM calls"))
                .anyMatch(t -> t.startsWith("LLM tokens"))
                .anyMatch(t -> t.startsWith("LLM cost"))
                .anyMatch(t -> t.startsWith("Agent construction"));
    }
}
