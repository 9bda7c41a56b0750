package dev.engram.service.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Pattern;
import dev.engram.understanding.FrontMatter;
import dev.engram.understanding.HtmlText;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;
import org.apache.pdfbox.Loader;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.encryption.InvalidPasswordException;
import org.apache.pdfbox.text.PDFTextStripper;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.Heading;
import org.commonmark.node.Node;
import org.commonmark.node.Text;
import org.commonmark.parser.Parser;
import org.jsoup.Jsoup;

/**
 * The files {@code ./engram ingest} reads as one document each, and their text: plain text as it is; Markdown as it is
 * but for its YAML front matter, which becomes the document's metadata and gives its title (else its first level-1
 * heading, as a CommonMark parser finds it: a {@code #} line in a code block is none); HTML (jsoup) and PDF (Apache
 * PDFBox) as Markdown-like text, headings as {@code #} lines and paragraphs apart, so the chunker cuts them as it cuts
 * Markdown. A file that cannot be read says why instead.
 */
final class DocumentFiles {

    private static final Pattern SPACES = Pattern.compile("[\\t\\n\\x0B\\f\\r ]+");

    /** A file's title, text and metadata (null when it has none), or the reason it cannot be sent. */
    record Read(String title, String text, JsonNode metadata, String refused) {
        Read(String title, String text, String refused) {
            this(title, text, null, refused);
        }

        static Read refused(String reason) {
            return new Read(null, null, null, reason);
        }
    }

    private static final Set<String> MARKDOWN = Set.of(".md", ".markdown");
    private static final Parser COMMONMARK = Parser.builder().build();

    private static final Set<String> TEXT = Set.of(".txt", ".md", ".markdown");
    private static final Set<String> HTML = Set.of(".html", ".htm");
    private static final String PDF = ".pdf";

    private DocumentFiles() {}

    /** Whether {@code ingest} sends a file of this name as one document. */
    static boolean isDocument(String fileName) {
        String ext = extension(fileName);
        return TEXT.contains(ext) || HTML.contains(ext) || ext.equals(PDF);
    }

    static Read read(Path file) throws IOException {
        String name = file.getFileName().toString();
        String ext = extension(name);
        int dot = name.lastIndexOf('.');
        String fallbackTitle = dot >= 0 && dot < name.length() - 1 ? name.substring(0, dot) : name;
        if (HTML.contains(ext)) {
            return html(file, fallbackTitle);
        }
        if (ext.equals(PDF)) {
            return pdf(file, fallbackTitle);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(Files.readAllBytes(file)))
                    .toString();
        } catch (CharacterCodingException e) {
            return Read.refused("not valid UTF-8");
        }
        if (!MARKDOWN.contains(ext)) {
            return new Read(firstHeading(text, fallbackTitle), text, null);
        }
        return markdown(text, fallbackTitle);
    }

    /**
     * Markdown: a YAML front matter — a first line {@code ---}, then YAML up to a line {@code ---} or {@code ...} — that
     * reads as a mapping is taken off the text and sent as the document's metadata, its {@code title} (a string) as the
     * title. Anything else that starts so is text. Otherwise the title is the first level-1 heading.
     */
    static Read markdown(String text, String fallbackTitle) {
        FrontMatter front = FrontMatter.of(text);
        String body = text.substring(front.body());
        String title = front.title() != null ? front.title() : firstHeading(body, fallbackTitle);
        return new Read(title, body, front.metadata(), null);
    }

    private static String extension(String fileName) {
        int dot = fileName.lastIndexOf('.');
        return dot < 0 ? "" : fileName.substring(dot).toLowerCase(Locale.ROOT);
    }

    /** The text of the first level-1 heading, ATX or setext, as CommonMark reads the document; else {@code otherwise}. */
    private static String firstHeading(String markdown, String otherwise) {
        Node doc = COMMONMARK.parse(markdown);
        for (Node n = doc.getFirstChild(); n != null; n = n.getNext()) {
            if (n instanceof Heading h && h.getLevel() == 1) {
                StringBuilder title = new StringBuilder();
                h.accept(new AbstractVisitor() {
                    @Override
                    public void visit(Text t) {
                        title.append(t.getLiteral());
                    }

                    @Override
                    public void visit(Code c) {
                        title.append(c.getLiteral());
                    }
                });
                String found = SPACES.matcher(title.toString()).replaceAll(" ").strip();
                if (!found.isEmpty()) {
                    return found;
                }
            }
        }
        return otherwise;
    }

    /** The page's text ({@link HtmlText}): its title from {@code <title>} (else its first heading). */
    private static Read html(Path file, String fallbackTitle) throws IOException {
        // the charset the page declares, else UTF-8
        HtmlText page = HtmlText.of(Jsoup.parse(file.toFile(), null));
        if (page.text().isBlank()) {
            return Read.refused("no text in the page");
        }
        String title = page.title().isEmpty() ? firstHeading(page.text(), fallbackTitle) : page.title();
        return new Read(title, page.text(), null);
    }

    /** The document's text page by page, its title from its metadata (else the file's name). */
    private static Read pdf(Path file, String fallbackTitle) throws IOException {
        try (PDDocument doc = Loader.loadPDF(file.toFile())) {
            PDFTextStripper stripper = new PDFTextStripper();
            stripper.setSortByPosition(true);
            stripper.setParagraphEnd("\n\n");
            String text = stripper.getText(doc).replace("\r\n", "\n").strip();
            if (text.isBlank()) {
                return Read.refused("no text in the PDF (a scanned PDF needs OCR first)");
            }
            String title = doc.getDocumentInformation().getTitle();
            return new Read(title == null || title.isBlank() ? fallbackTitle : title.strip(), text, null);
        } catch (InvalidPasswordException e) {
            return Read.refused("the PDF is encrypted");
        } catch (IOException e) {
            return Read.refused("not a readable PDF: " + e.getMessage());
        }
    }
}
