package io.boxline.server;

import io.boxline.BoxlineException;

/**
 * A server configuration that cannot be used. The message names the file, the key (a path such as
 * {@code topics[2].partitions}) and what to write instead.
 */
public class ConfigException extends BoxlineException {
  private final String source;
  private final String key;

  public ConfigException(String source, String key, String problem) {
    super(source + ": " + (key.isEmpty() ? "" : key + ": ") + problem);
    this.source = source;
    this.key = key;
  }

  /** The file (or "environment") the setting came from. */
  public String source() {
    return source;
  }

  /**
   * The setting's path in the file, e.g. {@code topics[2].partitions}; empty for the whole file.
   */
  public String key() {
    return key;
  }
}
