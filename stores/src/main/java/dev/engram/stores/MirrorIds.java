package dev.engram.stores;

import dev.engram.schemas.MirrorRecord.Kind;
import java.util.Locale;

/**
 * Ids of mirrored objects that are not stored under their own key (mentions, facts, questions, themes), and the key of
 * an object's entry in the {@code memory-mirror} store. Passage and surface entity ids are hexadecimal, so the
 * separators below never occur inside them.
 */
public final class MirrorIds {

    private static final String FACT = "/f/";
    private static final String QUESTION = "/q/";
    private static final String MENTION = "|";

    private MirrorIds() {}

    /** The key of an object's mirror entry: (namespace, kind, id). */
    public static String key(String namespace, Kind kind, String id) {
        return Keys.of(namespace, kind.wireName(), id);
    }

    /** The prefix of every mirror entry of a namespace's objects of one kind. */
    public static String prefix(String namespace, Kind kind) {
        return Keys.prefix(namespace, kind.wireName());
    }

    public static String mentionId(String passageId, String surfaceId) {
        return passageId + MENTION + surfaceId;
    }

    /** {passage id, surface id} of a mention id. */
    public static String[] mentionParts(String mentionId) {
        int i = mentionId.indexOf(MENTION);
        if (i < 0) {
            throw new IllegalArgumentException("not a mention id: " + mentionId);
        }
        return new String[] {mentionId.substring(0, i), mentionId.substring(i + 1)};
    }

    public static String factId(String passageId, int index) {
        return passageId + FACT + index;
    }

    public static String questionId(String passageId, int index) {
        return passageId + QUESTION + index;
    }

    public static String themeId(int rank) {
        return String.format(Locale.ROOT, "theme-%d", rank);
    }

    /** The passage a fact or question id belongs to. */
    public static String passageOf(String factOrQuestionId) {
        int i = factOrQuestionId.indexOf('/');
        if (i < 0) {
            throw new IllegalArgumentException("not a fact or question id: " + factOrQuestionId);
        }
        return factOrQuestionId.substring(0, i);
    }
}
