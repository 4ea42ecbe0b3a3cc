package io.boxline;

import java.util.Arrays;
import java.util.List;

/**
 * A hierarchical namespace such as {@code acme/billing}. Case-sensitive; see {@link Names} for the
 * rules.
 */
public final class NamespacePath {
  private final String path;
  private final List<String> segments;

  private NamespacePath(String path, List<String> segments) {
    this.path = path;
    this.segments = segments;
  }

  /** Parses and validates {@code a/b/c}. */
  public static NamespacePath of(String path) {
    if (path == null || path.isEmpty()) {
      throw new ValidationException("namespace path must not be empty; use e.g. \"acme/billing\"");
    }
    if (path.length() > Names.MAX_PATH_LENGTH) {
      throw new ValidationException(
          "namespace path is "
              + path.length()
              + " characters long; the limit is "
              + Names.MAX_PATH_LENGTH);
    }
    List<String> segments = Arrays.asList(path.split("/", -1));
    if (segments.size() > Names.MAX_NAMESPACE_DEPTH) {
      throw new ValidationException(
          "namespace path '"
              + Names.abbreviate(path)
              + "' has "
              + segments.size()
              + " segments; the limit is "
              + Names.MAX_NAMESPACE_DEPTH);
    }
    for (String s : segments) {
      Names.requireName("namespace segment in '" + Names.abbreviate(path) + "'", s);
    }
    return new NamespacePath(path, List.copyOf(segments));
  }

  public List<String> segments() {
    return segments;
  }

  /** The parent namespace, or null for a root namespace. */
  public NamespacePath parent() {
    if (segments.size() == 1) {
      return null;
    }
    return new NamespacePath(
        path.substring(0, path.lastIndexOf('/')), segments.subList(0, segments.size() - 1));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NamespacePath && ((NamespacePath) o).path.equals(path);
  }

  @Override
  public int hashCode() {
    return path.hashCode();
  }

  @Override
  public String toString() {
    return path;
  }
}
