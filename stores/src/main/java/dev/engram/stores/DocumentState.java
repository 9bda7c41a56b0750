package dev.engram.stores;

import dev.engram.schemas.UnderstandingEvent.PassageRef;
import java.util.List;

/** What the read step remembers of a document: its version and the passages of that version. */
public record DocumentState(String namespace, String id, long version, boolean deleted, List<PassageRef> passages) {
    public DocumentState {
        passages = passages == null ? List.of() : List.copyOf(passages);
    }
}
