package dev.engram.processors;

import dev.engram.schemas.PassageEvent;

/**
 * Which passages share a cached extraction. An extraction is a function of the text and the extractor, but a cache
 * hit is observable — no tokens are counted for the namespace, and the passage is understood sooner — so sharing one
 * across namespaces tells a tenant that another tenant holds the same text.
 */
public enum ExtractionCacheScope {
    /** Only passages of the same namespace share an extraction (the default: tenants learn nothing of each other). */
    NAMESPACE,
    /** Every passage with the same text shares one, whatever its namespace (one trust domain, lowest LLM cost). */
    GLOBAL;

    /** The key of {@code passage}'s extraction by {@code extractorId} in the cache. */
    public String key(PassageEvent.Upsert passage, String extractorId) {
        String shared = passage.contentHash() + "|" + extractorId;
        // A content hash is hexadecimal and a namespace has no '/' (see the document schema): the forms never collide.
        return this == GLOBAL ? shared : passage.namespace() + "/" + shared;
    }
}
