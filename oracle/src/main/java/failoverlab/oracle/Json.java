package failoverlab.oracle;

import java.util.Collection;

/** A tiny JSON-lines writer: keys in the order written, so the bytes depend only on the seed. */
final class Json {
    private final StringBuilder sb = new StringBuilder();
    private boolean first = true;

    Json() {
        sb.append('{');
    }

    private Json key(String k) {
        if (!first) sb.append(',');
        first = false;
        sb.append('"').append(k).append("\":");
        return this;
    }

    Json num(String k, long v) {
        key(k).sb.append(v);
        return this;
    }

    Json bool(String k, boolean v) {
        key(k).sb.append(v);
        return this;
    }

    Json str(String k, String v) {
        key(k).sb.append('"').append(v).append('"');
        return this;
    }

    Json nul(String k) {
        key(k).sb.append("null");
        return this;
    }

    Json ints(String k, int[] v) {
        key(k).sb.append('[');
        for (int i = 0; i < v.length; i++) {
            if (i > 0) sb.append(',');
            sb.append(v[i]);
        }
        sb.append(']');
        return this;
    }

    Json ints(String k, Collection<Integer> v) {
        return ints(k, v.stream().mapToInt(Integer::intValue).toArray());
    }

    Json raw(String k, String json) {
        key(k).sb.append(json);
        return this;
    }

    Json obj(String k, Json v) {
        return raw(k, v.toString());
    }

    @Override
    public String toString() {
        return sb.toString() + "}";
    }
}
