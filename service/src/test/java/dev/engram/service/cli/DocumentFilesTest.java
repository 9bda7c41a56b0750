package dev.engram.service.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.PDPageContentStream;
import org.apache.pdfbox.pdmodel.encryption.AccessPermission;
import org.apache.pdfbox.pdmodel.encryption.StandardProtectionPolicy;
import org.apache.pdfbox.pdmodel.font.PDType1Font;
import org.apache.pdfbox.pdmodel.font.Standard14Fonts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DocumentFilesTest {

    @TempDir
    Path dir;

    @Test
    void whichFilesAreDocuments() {
        assertThat(DocumentFiles.isDocument("a.md")).isTrue();
        assertThat(DocumentFiles.isDocument("A.HTML")).isTrue();
        assertThat(DocumentFiles.isDocument("report.pdf")).isTrue();
        assertThat(DocumentFiles.isDocument("notes.TXT")).isTrue();
        assertThat(DocumentFiles.isDocument("image.png")).isFalse();
        assertThat(DocumentFiles.isDocument("Makefile")).isFalse();
        assertThat(DocumentFiles.isDocument("lines.jsonl"))
                .as("read line by line, not as one document")
                .isFalse();
    }

    @Test
    void markdownFrontMatterBecomesMetadataAndGivesTheTitle() throws IOException {
        Path f = dir.resolve("storage.md");
        Files.writeString(
                f,
                "---\ntitle: Storage\ntags: [disk, ssd]\nweight: 3\n---\n# Storing vectors\n\nVectors live on disk.\n");
        DocumentFiles.Read read = DocumentFiles.read(f);
        assertThat(read.title()).isEqualTo("Storage");
        assertThat(read.metadata().path("tags").get(1).asText()).isEqualTo("ssd");
        assertThat(read.metadata().path("weight").asInt()).isEqualTo(3);
        assertThat(read.text()).isEqualTo("# Storing vectors\n\nVectors live on disk.\n");
    }

    @Test
    void aHashLineInACodeBlockIsNoTitleAndAHeadingIsFoundAsCommonMarkReadsIt() throws IOException {
        Path f = dir.resolve("install.md");
        Files.writeString(
                f,
                "Intro text.\n\n```sh\n# or, with pip\npip install thing\n```\n\nInstalling\n==========\n\nSteps.\n");
        DocumentFiles.Read read = DocumentFiles.read(f);
        assertThat(read.title()).isEqualTo("Installing"); // a setext heading; the comment in the fence is none
        assertThat(read.metadata()).isNull();
        assertThat(read.text()).contains("# or, with pip");

        Path plain = dir.resolve("no-heading.md");
        Files.writeString(plain, "```\n# not a title\n```\n");
        assertThat(DocumentFiles.read(plain).title()).isEqualTo("no-heading");
    }

    @Test
    void whatOnlyLooksLikeFrontMatterStaysText() {
        // not a mapping, not YAML, never closed: the lines are the document's text
        for (String text :
                List.of("---\n- a\n- b\n---\n# T\n", "---\n: : [\n---\n# T\n", "---\ntitle: never closed\n# T\n")) {
            DocumentFiles.Read read = DocumentFiles.markdown(text, "file");
            assertThat(read.text()).as(text).isEqualTo(text);
            assertThat(read.metadata()).as(text).isNull();
        }
        // a blank or non-text title falls back to the first heading
        DocumentFiles.Read blank = DocumentFiles.markdown("---\ntitle: ''\n---\n# Heading\n", "file");
        assertThat(blank.title()).isEqualTo("Heading");
        assertThat(blank.metadata()).isNotNull();
        assertThat(DocumentFiles.markdown("---\ntitle: [1, 2]\n---\nno heading\n", "file")
                        .title())
                .isEqualTo("file");
    }

    @Test
    void htmlBecomesHeadingsAndParagraphsWithoutScriptsOrStyles() throws IOException {
        Path page = dir.resolve("babbage.html");
        Files.writeString(page, """
                <!doctype html><html><head><title> Charles Babbage </title>
                <style>p { color: red }</style><script>var secret = "never sent";</script></head>
                <body><nav><a href="/">Home</a></nav>
                <h1>Charles   Babbage</h1>
                <p>Charles Babbage designed the <b>Analytical Engine</b>.<br>He lived in London.</p>
                <script>document.write("never sent either")</script>
                <h2></h2>
                <ul><li>Difference Engine</li><li><p>Analytical Engine</p></li></ul>
                <div>Text in a div &amp; an entity &lt;x&gt;</div>
                </body></html>""", StandardCharsets.UTF_8);

        DocumentFiles.Read read = DocumentFiles.read(page);

        assertThat(read.refused()).isNull();
        assertThat(read.title()).isEqualTo("Charles Babbage");
        assertThat(read.text())
                .contains("# Charles Babbage\n\n")
                .contains("Charles Babbage designed the Analytical Engine.\n\nHe lived in London.")
                .contains("Difference Engine\n\nAnalytical Engine")
                .contains("Text in a div & an entity <x>")
                .doesNotContain("never sent")
                .doesNotContain("color")
                .doesNotContain("\n\n\n");
    }

    @Test
    void anHtmlPageWithoutTitleTakesItsFirstHeadingAndAnEmptyPageIsRefused() throws IOException {
        Path page = dir.resolve("page.htm");
        Files.writeString(page, "<h1>First heading</h1><p>Body.</p>");
        assertThat(DocumentFiles.read(page).title()).isEqualTo("First heading");

        Path empty = dir.resolve("empty.html");
        Files.writeString(empty, "<html><head><script>x()</script></head><body>  </body></html>");
        assertThat(DocumentFiles.read(empty).refused()).isEqualTo("no text in the page");
    }

    @Test
    void aPdfIsSentAsItsTextWithItsTitle() throws IOException {
        Path file = dir.resolve("engine.pdf");
        try (PDDocument doc = new PDDocument()) {
            doc.getDocumentInformation().setTitle("The Analytical Engine");
            write(doc, "Charles Babbage designed the Analytical Engine.");
            write(doc, "Ada Lovelace wrote its first program.");
            doc.save(file.toFile());
        }

        DocumentFiles.Read read = DocumentFiles.read(file);

        assertThat(read.refused()).isNull();
        assertThat(read.title()).isEqualTo("The Analytical Engine");
        assertThat(read.text())
                .contains("Charles Babbage designed the Analytical Engine.")
                .contains("Ada Lovelace wrote its first program.");
        assertThat(read.text().indexOf("Charles")).isLessThan(read.text().indexOf("Ada"));
    }

    @Test
    void aPdfThatCannotBeReadIsRefusedWithItsReason() throws IOException {
        Path garbage = dir.resolve("garbage.pdf");
        Files.write(garbage, "%PDF-1.7 this is not a PDF".getBytes(StandardCharsets.US_ASCII));
        assertThat(DocumentFiles.read(garbage).refused()).startsWith("not a readable PDF");

        Path blank = dir.resolve("blank.pdf");
        try (PDDocument doc = new PDDocument()) {
            doc.addPage(new PDPage());
            doc.save(blank.toFile());
        }
        assertThat(DocumentFiles.read(blank).refused()).contains("no text in the PDF");

        Path locked = dir.resolve("locked.pdf");
        try (PDDocument doc = new PDDocument()) {
            write(doc, "Secret text.");
            StandardProtectionPolicy policy = new StandardProtectionPolicy("owner", "user", new AccessPermission());
            doc.protect(policy);
            doc.save(locked.toFile());
        }
        assertThat(DocumentFiles.read(locked).refused()).isEqualTo("the PDF is encrypted");
    }

    @Test
    void textThatIsNotUtf8IsRefused() throws IOException {
        Path bad = dir.resolve("bad.txt");
        Files.write(bad, new byte[] {'a', (byte) 0xff, 'b'});
        assertThat(DocumentFiles.read(bad).refused()).isEqualTo("not valid UTF-8");
        Path md = dir.resolve("note.md");
        Files.writeString(md, "intro\n# Title here\ntext");
        assertThat(DocumentFiles.read(md).title()).isEqualTo("Title here");
        assertThat(DocumentFiles.read(md).text()).isEqualTo("intro\n# Title here\ntext");
    }

    private static void write(PDDocument doc, String line) throws IOException {
        PDPage page = new PDPage();
        doc.addPage(page);
        try (PDPageContentStream content = new PDPageContentStream(doc, page)) {
            content.beginText();
            content.setFont(new PDType1Font(Standard14Fonts.FontName.HELVETICA), 12);
            content.newLineAtOffset(72, 700);
            content.showText(line);
            content.endText();
        }
    }
}
