package dev.engram.service.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lines of a .jsonl file given to {@code engram ingest} are read as strictly as the API and the topic read JSON. */
class JsonLinesTest {

    @Test
    void aLineThatNamesAFieldTwiceOrHasMoreAfterItsValueIsRefusedWithItsReason(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("lines.jsonl");
        Files.writeString(f, """
                {"id": "a", "text": "fine"}
                {"id": "b", "text": "ok", "text": "dup"}
                {"id": "c", "text": "Trailing"} x
                {"id": "d", "text": NaN}
                """);
        List<IngestFiles.Item> items = new ArrayList<>();

        IngestFiles.lines(f, "lines.jsonl", items);

        assertThat(items).hasSize(4);
        assertThat(items.get(0).problem()).isNull();
        assertThat(items.get(0).body().path("text").asText()).isEqualTo("fine");
        assertThat(items.get(1).problem()).isEqualTo("not JSON: Duplicate field 'text' (line 1, column 33)");
        assertThat(items.get(2).problem()).startsWith("not JSON: ").contains("'x'");
        assertThat(items.get(3).problem())
                .startsWith("not JSON: Non-standard token 'NaN'")
                .doesNotContain("`");
    }

    @Test
    void aLineThatIsNotUtf8IsRefusedAloneAndTheOthersAreRead(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("mixed.jsonl");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes("{\"id\":\"a\",\"text\":\"".getBytes(StandardCharsets.UTF_8));
        bytes.write(0xff); // no UTF-8 sequence starts with it
        bytes.writeBytes("\"}\r\n{\"id\":\"b\",\"text\":\"ok\"}".getBytes(StandardCharsets.UTF_8));
        Files.write(f, bytes.toByteArray());
        List<IngestFiles.Item> items = new ArrayList<>();

        IngestFiles.lines(f, "mixed.jsonl", items);

        assertThat(items).hasSize(2);
        assertThat(items.get(0).problem()).isEqualTo("not valid UTF-8");
        assertThat(items.get(0).where()).endsWith("mixed.jsonl:1");
        assertThat(items.get(1).problem()).isNull();
        assertThat(items.get(1).body().path("text").asText()).isEqualTo("ok");
    }
}
