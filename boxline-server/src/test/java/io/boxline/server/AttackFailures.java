package io.boxline.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The failures of a generated attack, grouped by kind. The report shows every kind with its count
 * and, in all, the first {@link #EXAMPLES} examples chosen round-robin over the kinds and, within a
 * kind, over distinct routes, each with its request and answer; the whole list goes to a file.
 */
final class AttackFailures {
  static final int EXAMPLES = 20;

  record Failure(
      int index, String kind, String route, String request, String response, String detail) {
    String render() {
      return "#"
          + index
          + " ["
          + kind
          + "] "
          + detail
          + "\n  request:\n    "
          + request.replace("\n", "\n    ")
          + "\n  response:\n    "
          + response.replace("\n", "\n    ");
    }
  }

  private final List<Failure> all = new ArrayList<>();
  private final String title;

  AttackFailures(String title) {
    this.title = title;
  }

  synchronized void add(
      int index, String kind, String route, String request, String response, String detail) {
    all.add(new Failure(index, kind, route, request, response, detail));
  }

  synchronized boolean isEmpty() {
    return all.isEmpty();
  }

  synchronized int size() {
    return all.size();
  }

  synchronized Map<String, Integer> countsByKind() {
    Map<String, Integer> counts = new TreeMap<>();
    all.forEach(f -> counts.merge(f.kind(), 1, Integer::sum));
    return counts;
  }

  /** Up to {@link #EXAMPLES}, every kind first, distinct routes first within a kind. */
  synchronized List<Failure> examples() {
    Map<String, List<Failure>> byKind = new TreeMap<>();
    for (Failure f : all) {
      byKind.computeIfAbsent(f.kind(), k -> new ArrayList<>()).add(f);
    }
    Map<String, List<Failure>> ordered = new LinkedHashMap<>();
    byKind.forEach(
        (kind, list) -> {
          List<Failure> distinct = new ArrayList<>();
          Set<String> routes = new LinkedHashSet<>();
          for (Failure f : list) {
            if (routes.add(f.route())) {
              distinct.add(f);
            }
          }
          for (Failure f : list) {
            if (!distinct.contains(f)) {
              distinct.add(f);
            }
          }
          ordered.put(kind, distinct);
        });
    List<Failure> out = new ArrayList<>();
    for (int round = 0; out.size() < EXAMPLES; round++) {
      boolean any = false;
      for (List<Failure> list : ordered.values()) {
        if (round < list.size() && out.size() < EXAMPLES) {
          out.add(list.get(round));
          any = true;
        }
      }
      if (!any) {
        break;
      }
    }
    return out;
  }

  synchronized String report(String header) {
    StringBuilder sb = new StringBuilder();
    sb.append(title).append(": ").append(all.size()).append(" failures\n").append(header);
    sb.append("\nby kind:\n");
    countsByKind().forEach((k, n) -> sb.append("  ").append(k).append(": ").append(n).append('\n'));
    sb.append("\nfirst ").append(Math.min(EXAMPLES, all.size())).append(" examples:\n");
    for (Failure f : examples()) {
      sb.append('\n').append(f.render()).append('\n');
    }
    return sb.toString();
  }

  /** Writes every failure to {@code file}; the path, or why not. */
  synchronized String writeAll(Path file, String header) {
    StringBuilder sb = new StringBuilder(header).append('\n');
    for (Failure f : all) {
      sb.append('\n').append(f.render()).append('\n');
    }
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
      return file.toAbsolutePath().toString();
    } catch (IOException e) {
      return "(could not write " + file + ": " + e.getMessage() + ")";
    }
  }

  /**
   * Throws the {@link #report} (and prints it) when there is a failure, after writing them all to
   * {@code file}.
   */
  void throwIfAny(Path file, String header) {
    if (!isEmpty()) {
      String written = writeAll(file, header);
      String report = report(header + "all failures: " + written + "\n");
      System.out.println(report);
      throw new AssertionError(report);
    }
  }
}
