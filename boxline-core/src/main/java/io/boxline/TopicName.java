package io.boxline;

import java.util.Objects;

/** A topic's full name: its namespace and its own name, written {@code acme/billing/orders}. */
public final class TopicName {
  private final NamespacePath namespace;
  private final String name;

  private TopicName(NamespacePath namespace, String name) {
    this.namespace = namespace;
    this.name = name;
  }

  public static TopicName of(NamespacePath namespace, String name) {
    Objects.requireNonNull(namespace, "namespace");
    return new TopicName(namespace, Names.requireName("topic name", name));
  }

  public static TopicName of(String namespace, String name) {
    return of(NamespacePath.of(namespace), name);
  }

  /** Parses {@code namespace/path/topic}: the last segment is the topic, the rest its namespace. */
  public static TopicName parse(String fullName) {
    int slash = fullName == null ? -1 : fullName.lastIndexOf('/');
    if (slash <= 0) {
      throw new ValidationException(
          "topic '"
              + (fullName == null ? null : Names.abbreviate(fullName))
              + "' has no namespace; write it as namespace/topic, e.g. \"acme/billing/orders\"");
    }
    return of(fullName.substring(0, slash), fullName.substring(slash + 1));
  }

  public NamespacePath namespace() {
    return namespace;
  }

  public String name() {
    return name;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TopicName
        && ((TopicName) o).namespace.equals(namespace)
        && ((TopicName) o).name.equals(name);
  }

  @Override
  public int hashCode() {
    return namespace.hashCode() * 31 + name.hashCode();
  }

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
