package dev.engram.understanding;

/** A fact under construction, with the verb it was read from (for continuations). */
record FactDraft(EntityGroup head, String relation, EntityGroup tail, int start, int end, double confidence) {}
