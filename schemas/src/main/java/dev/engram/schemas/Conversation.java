package dev.engram.schemas;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Who says a chat turn, among whom, and in which session: read from a document's {@code metadata.speaker}, {@code
 * metadata.participants} and {@code metadata.session}. A document is a turn of a conversation when its metadata names a
 * speaker.
 *
 * @param speaker who wrote or said the turn
 * @param participants everyone in the conversation, the speaker included, in the order given (at most {@link
 *     #MAX_PARTICIPANTS})
 * @param session the session the turn belongs to, or null
 */
public record Conversation(String speaker, List<String> participants, String session) {

    /** How many participants are kept. */
    public static final int MAX_PARTICIPANTS = 64;

    /** The longest speaker, participant or session name kept (the document schema refuses longer ones). */
    public static final int MAX_NAME = 200;

    public Conversation {
        Objects.requireNonNull(speaker, "speaker");
        Set<String> all = new LinkedHashSet<>();
        for (String p : participants == null ? List.<String>of() : participants) {
            if (p != null && !p.isBlank() && all.size() < MAX_PARTICIPANTS) {
                all.add(p.strip());
            }
        }
        participants = List.copyOf(all);
        session = session == null || session.isBlank() ? null : session.strip();
        if (session != null && session.length() > MAX_NAME) {
            session = session.substring(0, MAX_NAME); // an integer of more digits than a name has characters
        }
    }

    /**
     * The conversation a document's metadata describes, or null when it names no speaker. Types the document schema
     * refuses ({@code speaker} not a string, {@code participants} not strings) never reach here; whatever else is
     * ignored.
     */
    public static Conversation of(Map<String, Object> metadata) {
        if (metadata == null || !(metadata.get("speaker") instanceof String speaker) || speaker.isBlank()) {
            return null;
        }
        List<String> participants = new ArrayList<>();
        if (metadata.get("participants") instanceof List<?> list) {
            for (Object o : list) {
                if (o instanceof String s) {
                    participants.add(s);
                }
            }
        }
        Object session = metadata.get("session");
        String sessionName = session instanceof String || session instanceof Number ? session.toString() : null;
        return new Conversation(speaker.strip(), participants, sessionName);
    }

    /**
     * The session a turn is part of, told apart from other conversations' sessions of the same name by who takes part
     * in it: the session name, then the participants (the speaker among them) in sorted order. Null without a session.
     */
    public String sessionKey() {
        if (session == null) {
            return null;
        }
        TreeSet<String> everyone = new TreeSet<>(participants);
        everyone.add(speaker);
        return session + "\u0000" + String.join("\u0000", everyone);
    }

    /** Whom a turn is said to: the one other participant of a two-person conversation; else null (not known). */
    public String addressee() {
        String other = null;
        for (String p : participants) {
            if (!p.equalsIgnoreCase(speaker)) {
                if (other != null) {
                    return null;
                }
                other = p;
            }
        }
        return other;
    }
}
