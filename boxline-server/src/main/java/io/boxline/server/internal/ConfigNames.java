package io.boxline.server.internal;

import java.util.Locale;
import java.util.Set;

/** The known name nearest to a misspelt one, for "did you mean" in config and request errors. */
final class ConfigNames {
  private ConfigNames() {}

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
