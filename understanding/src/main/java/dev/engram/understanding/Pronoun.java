package dev.engram.understanding;

/**
 * A pronoun resolved to an entity; {@code person} is 1 or 2 for the first or second person of a conversation's
 * turn (resolved to its speaker or addressee), else 3.
 */
record Pronoun(int start, int end, int sentence, int token, EntityGroup target, boolean possessive, int person) {

    Pronoun(int start, int end, int sentence, int token, EntityGroup target, boolean possessive) {
        this(start, end, sentence, token, target, possessive, 3);
    }
}
