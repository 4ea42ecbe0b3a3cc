package io.boxline.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * One command-line option, declared once: its name ({@code --name=value}), its default (as it would
 * be written on the command line; null for none), what it does, and how its value is read. {@link
 * Options} parses a command line against the options of the chosen workloads; {@code --help} lists
 * them.
 */
record Opt<T>(String name, String defaultText, String doc, Function<String, T> parser) {
  static Opt<String> text(String name, String def, String doc) {
    return new Opt<>(name, def, doc, v -> v);
  }

  static Opt<Integer> integer(String name, int def, String doc) {
    return new Opt<>(name, Integer.toString(def), doc, Integer::parseInt);
  }

  static Opt<Double> decimal(String name, double def, String doc) {
    String text = def == Math.rint(def) ? Long.toString((long) def) : Double.toString(def);
    return new Opt<>(name, text, doc, Double::parseDouble);
  }

  static Opt<Boolean> flag(String name, boolean def, String doc) {
    return new Opt<>(name, Boolean.toString(def), doc, Boolean::parseBoolean);
  }

  /** A comma-separated list of integers; blanks are skipped, so {@code --x=} is an empty list. */
  static Opt<int[]> ints(String name, String def, String doc) {
    return new Opt<>(
        name,
        def,
        doc,
        v ->
            Arrays.stream(v.split(","))
                .filter(x -> !x.isBlank())
                .mapToInt(x -> Integer.parseInt(x.trim()))
                .toArray());
  }

  /** A comma-separated list of words, each one of {@code allowed} (lower case). */
  static Opt<List<String>> words(String name, String def, String doc, List<String> allowed) {
    return new Opt<>(
        name,
        def,
        doc,
        v -> {
          List<String> words = List.of(v.toLowerCase(Locale.ROOT).split(","));
          for (String w : words) {
            if (!allowed.contains(w)) {
              throw new IllegalArgumentException(
                  "--" + name + " takes " + String.join(", ", allowed) + "; got " + w);
            }
          }
          return words;
        });
  }

  /** One of the constants of {@code type}, written in lower case with dashes. */
  static <E extends Enum<E>> Opt<E> choice(String name, E def, String doc, Class<E> type) {
    return new Opt<>(
        name,
        def.name().toLowerCase(Locale.ROOT).replace('_', '-'),
        doc,
        v -> Enum.valueOf(type, v.toUpperCase(Locale.ROOT).replace('-', '_')));
  }

  T parse(String value) {
    try {
      return parser.apply(value);
    } catch (IllegalArgumentException e) {
      String why = e.getMessage() != null && e.getMessage().startsWith("--") ? e.getMessage() : "";
      throw new IllegalArgumentException(
          why.isEmpty() ? "--" + name + ": cannot read \"" + value + "\"" : why, e);
    }
  }
}
