package io.boxline.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The bench's one option parser: {@code --name=value} arguments, checked against the {@link Opt}s
 * of the chosen workloads (an unknown name or an unreadable value is an error before anything
 * runs), read back typed with {@link #get}.
 */
final class Options {
  private final Map<String, String> given;

  private Options(Map<String, String> given) {
    this.given = given;
  }

  static Options parse(List<String> args, Collection<Opt<?>> known) {
    Map<String, Opt<?>> byName = new LinkedHashMap<>();
    for (Opt<?> o : known) {
      byName.putIfAbsent(o.name(), o);
    }
    Map<String, String> given = new LinkedHashMap<>();
    for (String a : args) {
      if (!a.startsWith("--") || !a.contains("=")) {
        throw new IllegalArgumentException(
            "expected --name=value, got " + a + " (--help lists them)");
      }
      String name = a.substring(2, a.indexOf('='));
      String value = a.substring(a.indexOf('=') + 1);
      if (!byName.containsKey(name)) {
        throw new IllegalArgumentException(
            "unknown option --" + name + " for these workloads (--help lists them)");
      }
      given.put(name, value);
    }
    for (Opt<?> o : known) { // every value readable, so a typo fails now and not an hour in
      if (given.containsKey(o.name())) {
        o.parse(given.get(o.name()));
      }
    }
    return new Options(given);
  }

  /** The value given on the command line, else the option's default (null when it has none). */
  <T> T get(Opt<T> option) {
    String v = given.getOrDefault(option.name(), option.defaultText());
    return v == null ? null : option.parse(v);
  }

  boolean given(Opt<?> option) {
    return given.containsKey(option.name());
  }

  /** One line per option: {@code --name=default doc}. */
  static String help(Collection<Opt<?>> options) {
    List<String> lines = new ArrayList<>();
    for (Opt<?> o : options) {
      String left = "  --" + o.name() + "=" + (o.defaultText() == null ? "" : o.defaultText());
      lines.add(left + " ".repeat(Math.max(2, 34 - left.length())) + o.doc());
    }
    return String.join("\n", lines) + "\n";
  }
}
