package dev.engram.understanding;

import dev.engram.schemas.EntityType;

/** A mention of an entity: its span and tokens within one sentence. */
final class Mention {

    /**
     * The longest name a mention may have: the verifier refuses longer ones, and a pronoun is replaced by its
     * target's name in the memory text, so a longer name would multiply the text.
     */
    static final int MAX_NAME = 120;

    final int start;
    final int end;
    final String text;
    final int sentence;
    final int firstToken;
    final int lastToken;
    EntityType type;
    EntityGroup group;

    Mention(String text, int start, int end, EntityType type, int sentence, int firstToken, int lastToken) {
        this.text = text;
        this.start = start;
        this.end = end;
        this.type = type;
        this.sentence = sentence;
        this.firstToken = firstToken;
        this.lastToken = lastToken;
    }
}
