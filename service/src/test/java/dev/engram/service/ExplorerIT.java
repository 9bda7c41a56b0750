package dev.engram.service;

import static org.assertj.core.api.Assertions.assertThat;

import dev.engram.schemas.Json;
import dev.engram.service.app.EmbeddedKafkaBroker;
import dev.engram.service.app.EngramConfig;
import dev.engram.service.app.EngramService;
import dev.engram.topology.Understanders;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The memory explorer in a real browser: Debian's headless Chromium, driven by Selenium, against one instance on the
 * embedded broker with API keys. It loads the page, gives a key, opens a namespace, searches, opens a document and an
 * entity, and sends an operator command; screenshots are kept in {@code target/explorer-screenshots}. Chromium and
 * chromedriver come from Debian's packages ({@code ./engram test} installs them where it can); without them this test
 * fails, unless {@code ENGRAM_SKIP_BROWSER_TEST=true} says to skip it.
 */
@ExtendWith(SharedKafkaBroker.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExplorerIT {

    private static final String NS = "explorer";
    private static final String ADMIN = "admin-key-0123456789";
    private static final String READER = "reader-key-0123456789";
    private static final String HOSTILE_TITLE = "<img src=x onerror=\"window.pwned=1\">Evil </td> & \"title\"";
    private static final Path SHOTS = Path.of("target", "explorer-screenshots");
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path stateDir;

    @TempDir
    static Path browserProfile;

    private EngramService service;
    private String base;
    private WebDriver browser;
    private WebDriverWait until;

    @BeforeAll
    void start(EmbeddedKafkaBroker broker) throws Exception {
        Path chromium = Path.of(env("ENGRAM_CHROMIUM", "/usr/bin/chromium"));
        Path driver = Path.of(env("ENGRAM_CHROMEDRIVER", "/usr/bin/chromedriver"));
        boolean present = Files.isExecutable(chromium) && Files.isExecutable(driver);
        if (!present && "true".equals(System.getenv("ENGRAM_SKIP_BROWSER_TEST"))) {
            Assumptions.abort("ENGRAM_SKIP_BROWSER_TEST=true and no Chromium at " + chromium);
        }
        assertThat(present)
                .as("the explorer test needs Debian's chromium and chromium-driver (apt-get install chromium "
                        + "chromium-driver; ./engram test installs them as root), or ENGRAM_CHROMIUM and "
                        + "ENGRAM_CHROMEDRIVER; ENGRAM_SKIP_BROWSER_TEST=true skips it")
                .isTrue();
        Files.createDirectories(SHOTS);

        String id = "explorer-" + UUID.randomUUID().toString().substring(0, 8);
        EngramConfig config = ItSupport.config(
                broker.bootstrapServers(),
                id,
                id + ".",
                stateDir,
                1,
                Map.of(
                        "ENGRAM_AUTH",
                        "required",
                        "ENGRAM_API_KEYS",
                        "admin:*:" + ADMIN + ";read:" + NS + ":" + READER));
        service = EngramService.start(config, Understanders.embedded());
        assertThat(service.awaitRunning(Duration.ofSeconds(60))).isTrue();
        base = "http://127.0.0.1:" + service.httpPort();
        put(
                "engine",
                "The Analytical Engine",
                "Charles Babbage designed the Analytical Engine in London. Ada Lovelace wrote the first program for "
                        + "the Analytical Engine. Babbage worked with Ada Lovelace for many years.");
        put(
                "lovelace",
                "Ada Lovelace",
                "Ada Lovelace was an English mathematician. Ada Lovelace was the daughter of Lord Byron.");
        put("navy", "Navy", "The United States Navy commissioned ships.");
        put("sailors", "Sailors", "USN sailors visited Bletchley Park.");
        put("hostile", HOSTILE_TITLE, "A title full of markup must show as text: <script>window.pwned=2</script>.");
        ItSupport.awaitVerified(base, NS, List.of("engine", "lovelace", "navy", "sailors", "hostile"), ADMIN);

        ChromeOptions options = new ChromeOptions()
                .setBinary(chromium.toFile())
                .addArguments(
                        "--headless=new",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-dev-shm-usage",
                        "--disable-quic",
                        "--no-first-run",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        "--window-size=1280,1000",
                        "--user-data-dir=" + browserProfile.toAbsolutePath());
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService driverService = new ChromeDriverService.Builder()
                .usingDriverExecutable(driver.toFile())
                .usingAnyFreePort()
                .build();
        browser = new ChromeDriver(driverService, options);
        until = new WebDriverWait(browser, WAIT);
    }

    @AfterAll
    void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (service != null) {
            service.close();
        }
    }

    @Test
    void aPersonBrowsesSearchesAndOpensAnEntityInTheBrowser() throws Exception {
        // the page asks for a key: the API answered 401 and the page holds no data of its own
        browser.get(base + "/");
        WebElement keyInput = until.until(ExpectedConditions.visibilityOfElementLocated(By.id("key-input")));
        assertThat(text(By.id("view"))).contains("needs an API key");
        keyInput.sendKeys(ADMIN);
        browser.findElement(By.cssSelector("#key-form button")).click();

        WebElement namespace = until.until(ExpectedConditions.elementToBeClickable(By.linkText(NS)));
        assertThat(text(By.id("view"))).contains("Namespaces");
        shot("01-namespaces");
        namespace.click();

        // the overview counts what memory holds, and lists the hostile title as text, never as markup
        until.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("[data-count=documents] b")));
        assertThat(text(By.cssSelector("[data-count=documents] b"))).isEqualTo("5");
        assertThat(text(By.id("view"))).contains("Recently changed documents").contains(HOSTILE_TITLE);
        assertThat(browser.findElements(By.cssSelector("main img"))).isEmpty();
        assertThat(((JavascriptExecutor) browser).executeScript("return window.pwned === undefined"))
                .isEqualTo(true);
        shot("02-namespace");

        // search with a mode picked from the API's own list of modes
        WebElement query = browser.findElement(By.cssSelector("form.search input[type=search]"));
        Select mode = new Select(browser.findElement(By.cssSelector("form.search select")));
        assertThat(mode.getOptions()).extracting(WebElement::getText).contains("dense", "hybrid", "cogito");
        mode.selectByVisibleText("hybrid");
        query.sendKeys("Who wrote the first program for the Analytical Engine?");
        query.submit();
        until.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#results article.result")));
        List<WebElement> results = browser.findElements(By.cssSelector("#results article.result"));
        assertThat(results).isNotEmpty();
        assertThat(results.get(0).getText()).contains("Memory:").contains("passage");
        assertThat(text(By.id("view"))).contains("passages by hybrid").contains("How hybrid found them");
        assertThat(browser.findElements(By.cssSelector("dl.explanation dt"))).isNotEmpty();
        shot("03-search");

        // a result's document: status, gist and passages, with its entities as links
        results.get(0).findElement(By.cssSelector(".meta a")).click();
        until.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#gist li")));
        assertThat(text(By.cssSelector("h1"))).contains("VERIFIED");
        shot("04-document");

        // the entity page: aliases, facts, passages, decisions, and its neighbourhood drawn from its facts
        browser.get(base + "/#/ns/" + NS + "/doc/engine");
        WebElement babbage = until.until(ExpectedConditions.elementToBeClickable(By.linkText("Charles Babbage")));
        babbage.click();
        until.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector("h1"), "Charles Babbage"));
        until.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("svg.graph circle.neighbour")));
        assertThat(browser.findElements(By.cssSelector("svg.graph circle.neighbour")))
                .extracting(c -> c.getAttribute("data-name"))
                .contains("Analytical Engine");
        assertThat(text(By.id("view"))).contains("Facts").contains("Passages").contains("Resolution decisions");
        shot("05-entity");

        // a neighbour opens its own page
        browser.findElement(By.cssSelector("svg.graph circle.neighbour[data-name='Analytical Engine']"))
                .click();
        until.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector("h1"), "Analytical Engine"));

        // an operator command from a merge decision's buttons: accepted with the admin key, refused with a reader's
        browser.get(base + "/#/ns/" + NS + "/entity/" + entityId("USN"));
        until.until(ExpectedConditions.textToBePresentInElementLocated(By.id("view"), "acronym"));
        // the decision shows its merge score, and the features the score read on hover
        assertThat(browser.findElements(By.cssSelector("th")))
                .extracting(WebElement::getText)
                .contains("Rule", "Score", "Evidence");
        assertThat(browser.findElements(By.cssSelector("td span[title]")))
                .extracting(e -> e.getAttribute("title"))
                .anySatisfy(t -> assertThat(t).contains("acronym 1"));
        WebElement split = until.until(ExpectedConditions.elementToBeClickable(By.cssSelector("button.split")));
        browser.findElement(By.id("reason")).sendKeys("two people");
        split.click();
        until.until(ExpectedConditions.textToBePresentInElementLocated(By.id("command-result"), "Accepted"));
        shot("06-command");

        browser.findElement(By.id("key-forget")).click();
        until.until(ExpectedConditions.visibilityOfElementLocated(By.id("key-input")))
                .sendKeys(READER);
        browser.findElement(By.cssSelector("#key-form button")).click();
        until.until(ExpectedConditions.elementToBeClickable(By.cssSelector("button.split")))
                .click();
        until.until(ExpectedConditions.textToBePresentInElementLocated(By.id("command-result"), "need an admin key"));

        // the themes page, and nothing the page did broke its own content security policy or threw
        browser.get(base + "/#/ns/" + NS + "/themes");
        until.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector("h1"), "Themes"));
        shot("07-themes");
        List<String> problems = browser.manage().logs().get(LogType.BROWSER).getAll().stream()
                .map(LogEntry::getMessage)
                .filter(m -> m.contains("Content Security Policy") || m.contains("Uncaught"))
                .toList();
        assertThat(problems).isEmpty();
    }

    @Test
    void theExplorersFilesAreServedAndNothingElseOfTheJar() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> page =
                http.send(HttpRequest.newBuilder(URI.create(base + "/")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type").orElseThrow().replace(" ", ""))
                .isEqualTo("text/html;charset=utf-8");
        assertThat(page.body()).contains("Content-Security-Policy").contains("/explorer/app.js");
        assertThat(page.headers().firstValue("X-Frame-Options")).hasValue("DENY");
        assertThat(page.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
        for (String name : List.of("app.js", "app.css")) {
            assertThat(http.send(
                                    HttpRequest.newBuilder(URI.create(base + "/explorer/" + name))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(200);
        }
        for (String name : List.of("openapi.json", "..%2Fopenapi.json", "app.js%00", "App.js", "%2e%2e")) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/explorer/" + name))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            // no file of the jar: not found, or a path the server refuses to read at all (an encoded dot segment)
            assertThat(r.statusCode()).as(name).isIn(400, 404);
            assertThat(r.body()).as(name).contains("\"error\"");
        }
    }

    private String entityId(String name) {
        return ItSupport.get(
                        base + "/v1/namespaces/" + NS + "/entities?name="
                                + URLEncoder.encode(name, StandardCharsets.UTF_8),
                        ADMIN)
                .body()
                .path("entities")
                .get(0)
                .path("id")
                .asText();
    }

    private void put(String id, String title, String text) throws Exception {
        String body = Json.mapper().writeValueAsString(Map.of("title", title, "text", text));
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(base + "/v1/namespaces/" + NS + "/documents/" + id))
                                .header("Authorization", "Bearer " + ADMIN)
                                .header("Content-Type", "application/json")
                                .PUT(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
    }

    private String text(By by) {
        return browser.findElement(by).getText();
    }

    private void shot(String name) {
        try {
            Files.write(SHOTS.resolve(name + ".png"), ((ChromeDriver) browser).getScreenshotAs(OutputType.BYTES));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String env(String name, String otherwise) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? otherwise : v;
    }
}
