package dev.engram.stores;

import dev.engram.schemas.UnderstandingEvent.PassageRef;
import java.util.List;

/**
 * What the read step remembers of a document: its version, the passages of that version, and the SHA-256 of the event
 * it was read from ({@code eventHash}, null for a delete or a state stored before it was kept), so that the same event
 * sent again changes nothing.
 */
public record DocumentState(
        String namespace, String id, long version, boolean deleted, List<PassageRef> passages, String eventHash) {
    public DocumentState {
        passages = passages == null ? List.of() : List.copyOf(passages);
    }
}
