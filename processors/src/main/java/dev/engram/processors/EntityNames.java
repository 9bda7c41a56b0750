package dev.engram.processors;

import java.text.Normalizer;
import java.util.Locale;
import java.util.regex.Pattern;

/** The normalized form under which entity names match exactly: case, diacritics, punctuation, leading article. */
public final class EntityNames {

    private static final Pattern MARKS = Pattern.compile("\\p{M}+");
    private static final Pattern NON_WORD = Pattern.compile("[^\\p{L}\\p{N}]+");
    private static final Pattern ARTICLE = Pattern.compile("^(the|a|an) ");

    private EntityNames() {}

    /**
     * The id of the surface entity a mention belongs to: mentions with the same namespace, normalized name and type
     * class are one surface entity; entity resolution then groups surfaces into resolved entities.
     */
    public static String surfaceId(String ns, String name, dev.engram.schemas.EntityType type) {
        return Hashing.id(ns, normalize(name), NameForms.typeClass(type).wireName());
    }

    public static String normalize(String name) {
        String s = Normalizer.normalize(name, Normalizer.Form.NFKD);
        s = MARKS.matcher(s).replaceAll("");
        s = NON_WORD.matcher(s.toLowerCase(Locale.ROOT)).replaceAll(" ").strip();
        String without = ARTICLE.matcher(s).replaceFirst("");
        return without.isEmpty() ? s : without;
    }
}
