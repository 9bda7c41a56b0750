package dev.engram.schemas;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Coarse entity types shared by every extractor. */
public enum EntityType {
    PERSON,
    ORGANIZATION,
    PLACE,
    DATE,
    NUMBER,
    WORK,
    CONCEPT,
    OTHER;

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
