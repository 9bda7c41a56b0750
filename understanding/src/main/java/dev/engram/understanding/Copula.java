package dev.engram.understanding;

/**
 * "X is a Y", "X, a Y,": the subject's mention, the concept mention of its class noun, and the verb that
 * links them ("is", "was"; "is" for an appositive).
 */
record Copula(Mention subject, Mention concept, String verb) {}
