package failoverlab.oracle;

import java.util.Collection;

/** A tiny JSON-lines writer: keys in the order written, so the bytes depend only on the seed. */
public final class Json {
    private final StringBuilder sb = new StringBuilder();
    private boolean first = true;

    public Json() {
        sb.append('{');
    }

    private Json key(String k) {
        if (!first) sb.append(',');
        first = false;
        sb.append('"').append(k).append("\":");
        return this;
    }

    public Json num(String k, long v) {
        key(k).sb.append(v);
        return this;
    }

    public Json bool(String k, boolean v) {
        key(k).sb.append(v);
        return this;
    }

    public Json str(String k, String v) {
        key(k).sb.append('"').append(v).append('"');
        return this;
    }

    /** A string with JSON escapes: quotes, backslashes, controls and every non-ASCII UTF-16 unit as \\uXXXX. */
    public Json text(String k, String v) {
        key(k).sb.append('"');
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == '"' || c == '\\') sb.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        sb.append('"');
        return this;
    }

    public Json nul(String k) {
        key(k).sb.append("null");
        return this;
    }

    public Json ints(String k, int[] v) {
        key(k).sb.append('[');
        for (int i = 0; i < v.length; i++) {
            if (i > 0) sb.append(',');
            sb.append(v[i]);
        }
        sb.append(']');
        return this;
    }

    public Json ints(String k, Collection<Integer> v) {
        return ints(k, v.stream().mapToInt(Integer::intValue).toArray());
    }

    public Json raw(String k, String json) {
        key(k).sb.append(json);
        return this;
    }

    public Json obj(String k, Json v) {
        return raw(k, v.toString());
    }

    @Override
    public String toString() {
        return sb.toString() + "}";
    }
}
