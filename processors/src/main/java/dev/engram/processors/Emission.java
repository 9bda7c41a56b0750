package dev.engram.processors;

import dev.engram.schemas.DeadLetter;
import dev.engram.schemas.Extraction;
import dev.engram.schemas.MemoryChange;
import dev.engram.schemas.MirrorRecord;
import dev.engram.schemas.PassageEvent;
import dev.engram.schemas.UnderstandingEvent;

/** What a step emits; the topology routes each kind to its topic with its key. */
public sealed interface Emission {

    /** To the passages topic, keyed by passage id. */
    record Passage(PassageEvent event) implements Emission {}

    /** To the understandings topic, keyed by namespace. */
    record Understood(UnderstandingEvent event) implements Emission {}

    /** To the extractions cache topic, keyed by "content hash|extractor id". */
    record Extracted(String cacheKey, Extraction extraction) implements Emission {}

    /** To the memory-changes topic, keyed by namespace. */
    record Change(MemoryChange change) implements Emission {}

    /** To the mirror topic, keyed by namespace. */
    record Mirrored(MirrorRecord record) implements Emission {}

    /** To the dead-letter topic, keyed by the original record key. */
    record Dead(byte[] key, DeadLetter letter) implements Emission {}
}
