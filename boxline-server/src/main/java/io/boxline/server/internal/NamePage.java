package io.boxline.server.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;

/**
 * One page of a list ordered by name ({@code ?limit=&after=}): the items named after {@code after},
 * at most {@code limit} of them, and the name to pass as {@code after} for the next page (null on
 * the last). Names are compared as Java strings, the order the answers show.
 */
record NamePage<T>(List<T> items, String next) {
  /** The most a page holds. */
  static final int MAX_LIMIT = 1000;

  /** A page when the request names no limit. */
  static final int DEFAULT_LIMIT = 100;

  static <T> NamePage<T> of(Call c, List<T> all, Function<T, String> name) {
    int limit = c.intQuery("limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
    String after = c.query("after").orElse(null);
    List<T> sorted = new ArrayList<>(all);
    sorted.sort(Comparator.comparing(name));
    List<T> out = new ArrayList<>();
    String next = null;
    for (T t : sorted) {
      if (after != null && name.apply(t).compareTo(after) <= 0) {
        continue;
      }
      if (out.size() == limit) {
        next = name.apply(out.get(out.size() - 1));
        break;
      }
      out.add(t);
    }
    return new NamePage<>(out, next);
  }
}
