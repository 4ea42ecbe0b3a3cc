package io.boxline.server.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.boxline.BoxlineException;
import io.boxline.server.ConfigException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A YAML (or request-body JSON) value with its path, so that every error names the file and the
 * key: typed getters with defaults and ranges, {@code ${...}} expansion, unknown keys refused with
 * the nearest allowed one. {@link ConfigReader} decides what a config means; this class only reads
 * values.
 */
final class ConfigNode {
  /** {@code ${NAME}} or {@code ${NAME:-default}}. */
  private static final Pattern VARIABLE =
      Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");

  final JsonNode json;
  final String path;

  /** The file (or "request body") that errors name. */
  private final String source;

  private final Map<String, String> env;

  /** False for request bodies: ${...} there is text, not a variable. */
  private final boolean expand;

  ConfigNode(JsonNode json, String path, String source, Map<String, String> env, boolean expand) {
    this.json = json;
    this.path = path;
    this.source = source;
    this.env = env;
    this.expand = expand;
  }

  ConfigException error(String problem) {
    return new ConfigException(source, path, problem);
  }

  boolean has(String key) {
    return json.has(key) && !json.get(key).isNull();
  }

  ConfigNode get(String key) {
    JsonNode child = json.get(key);
    return new ConfigNode(
        child == null ? MissingNode.getInstance() : child,
        path.isEmpty() ? key : path + "." + key,
        source,
        env,
        expand);
  }

  void object() {
    if (!json.isObject() && !json.isMissingNode()) {
      throw error("must be a mapping of keys to values");
    }
  }

  /** Refuses keys not in {@code allowed}, suggesting the closest one. */
  void only(String... allowed) {
    object();
    Set<String> ok = Set.of(allowed);
    for (Iterator<String> it = json.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!ok.contains(key)) {
        String near = nearest(key, ok);
        throw get(key)
            .error(
                "unknown key"
                    + (near == null ? "" : "; did you mean '" + near + "'?")
                    + " Allowed here: "
                    + String.join(", ", new TreeSet<>(ok)));
      }
    }
  }

  List<ConfigNode> list() {
    if (json.isMissingNode() || json.isNull()) {
      return List.of();
    }
    if (!json.isArray()) {
      throw error("must be a list (write each item on a line starting with '- ')");
    }
    List<ConfigNode> items = new ArrayList<>();
    for (int i = 0; i < json.size(); i++) {
      items.add(new ConfigNode(json.get(i), path + "[" + i + "]", source, env, expand));
    }
    return items;
  }

  String scalar() {
    if (!json.isValueNode() || json.isNull()) {
      throw error(
          json.isMissingNode() || json.isNull()
              ? "is required"
              : "must be a single value, not a " + (json.isArray() ? "list" : "mapping"));
    }
    return expand(json.asText());
  }

  private String expand(String raw) {
    if (!expand) {
      return raw;
    }
    Matcher m = VARIABLE.matcher(raw);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String value = env.get(m.group(1));
      if (value == null || value.isEmpty()) {
        value = m.group(2);
      }
      if (value == null) {
        throw error(
            "the environment variable "
                + m.group(1)
                + " is not set; set it, or write ${"
                + m.group(1)
                + ":-default} to give a default");
      }
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    m.appendTail(out);
    return out.toString();
  }

  String requiredText(String key) {
    if (!has(key)) {
      throw get(key).error("is required");
    }
    String v = get(key).scalar();
    if (v.isBlank()) {
      throw get(key).error("must not be empty");
    }
    return v;
  }

  Optional<String> optionalText(String key) {
    if (!has(key)) {
      return Optional.empty();
    }
    String v = get(key).scalar();
    return v.isEmpty() ? Optional.empty() : Optional.of(v);
  }

  String text(String key, String dflt) {
    return optionalText(key).orElse(dflt);
  }

  int integer(String key, int dflt, int min, int max) {
    long v = longValue(key, dflt);
    if (v < min || v > max) {
      throw get(key).error("must be between " + min + " and " + max + ", got " + v);
    }
    return (int) v;
  }

  long longValue(String key, long dflt) {
    if (!has(key)) {
      return dflt;
    }
    String s = get(key).scalar();
    try {
      return Long.parseLong(s.replace("_", ""));
    } catch (NumberFormatException e) {
      throw get(key).error("must be a whole number, got '" + s + "'");
    }
  }

  double decimal(String key, double dflt) {
    if (!has(key)) {
      return dflt;
    }
    String s = get(key).scalar();
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      throw get(key).error("must be a number, got '" + s + "'");
    }
  }

  boolean bool(String key, boolean dflt) {
    if (!has(key)) {
      return dflt;
    }
    String s = get(key).scalar();
    if (s.equals("true") || s.equals("false")) {
      return Boolean.parseBoolean(s);
    }
    throw get(key).error("must be true or false, got '" + s + "'");
  }

  Optional<Duration> optionalDuration(String key) {
    if (!has(key)) {
      return Optional.empty();
    }
    return Optional.of(duration(key, null));
  }

  Duration duration(String key, Duration dflt) {
    if (!has(key)) {
      return dflt;
    }
    // Names.duration refuses negative and over-long durations itself, naming the fix.
    return get(key)
        .parse(io.boxline.Names::duration, "a duration such as 250ms, 30s, 5m, 2h or 7d");
  }

  <T> T parse(Function<String, T> parser) {
    return parse(parser, null);
  }

  <T> T parse(Function<String, T> parser, String expected) {
    String s = scalar();
    try {
      return parser.apply(s);
    } catch (BoxlineException e) {
      throw error(e.getMessage());
    } catch (RuntimeException e) {
      throw error("'" + s + "' is not valid" + (expected == null ? "" : "; expected " + expected));
    }
  }

  <T> T wrap(Supplier<T> build) {
    try {
      return build.get();
    } catch (ConfigException e) {
      throw e;
    } catch (BoxlineException | IllegalArgumentException e) {
      throw error(e.getMessage());
    }
  }

  /** The candidate within two edits of {@code key} (case aside), or null. */
  static String nearest(String key, Set<String> candidates) {
    String best = null;
    int bestDistance = 3;
    for (String c : candidates) {
      int d = distance(key.toLowerCase(Locale.ROOT), c.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    return best;
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
