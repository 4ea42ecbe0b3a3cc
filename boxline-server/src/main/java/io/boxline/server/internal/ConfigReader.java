package io.boxline.server.internal;

import io.boxline.StartPosition;
import io.boxline.server.ConfigException;
import io.boxline.server.ServerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;

/**
 * Reads the server's YAML config into a {@link ServerConfig}: {@link ConfigBinding} binds the file
 * to the records of {@link ConfigFile} (unknown keys, wrong types and missing environment variables
 * refused), which check it (impossible values refused); every refusal names the file, the key and
 * the fix.
 */
public final class ConfigReader {
  /** Extra admin token from the environment, so a quick start needs no file. */
  public static final String ADMIN_TOKEN_VARIABLE = "BOXLINE_ADMIN_TOKEN";

  private ConfigReader() {}

  /** What a config without a database is told. */
  static final String NO_DATABASE =
      "is required: the server keeps its events in a database of yours. Set database.url to its"
          + " JDBC URL (e.g. jdbc:postgresql://127.0.0.1:5432/app, see docs/guide/server.md), or run"
          + " with --dev to try the server out on a throwaway embedded PostgreSQL";

  /** What a server started with neither a config nor {@code --dev} is told. */
  public static final String NO_CONFIG =
      "no config given, so the server has no database. Pass --config boxline.yaml (or set "
          + "BOXLINE_CONFIG) with database.url set to your database's JDBC URL (see"
          + " docs/guide/server.md), or run with --dev to try the server out on a throwaway embedded"
          + " PostgreSQL";

  public static ServerConfig read(Path file, Map<String, String> env) {
    return read(file, env, false);
  }

  /**
   * Reads a config file; with {@code dev} (the {@code --dev} flag) it must not name a database, and
   * the server runs on a throwaway embedded PostgreSQL.
   */
  public static ServerConfig read(Path file, Map<String, String> env, boolean dev) {
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new ConfigException(
          file.toString(),
          "",
          "no such file; pass the path of a YAML config (see docs/guide/server.md)");
    } catch (IOException e) {
      throw new ConfigException(file.toString(), "", "cannot be read: " + e.getMessage());
    }
    return parse(text, file.toString(), env, dev);
  }

  public static ServerConfig parse(String yaml, String source, Map<String, String> env) {
    return parse(yaml, source, env, false);
  }

  public static ServerConfig parse(
      String yaml, String source, Map<String, String> env, boolean dev) {
    return ConfigBinding.read(yaml, source, env).resolve(source, env, dev);
  }

  /**
   * {@code --dev} without a file: the defaults on a throwaway embedded PostgreSQL, the token from
   * {@code BOXLINE_ADMIN_TOKEN}.
   */
  public static ServerConfig dev(Map<String, String> env) {
    return parse("", "--dev", env, true);
  }

  /** earliest, latest or an ISO-8601 time; IllegalArgumentException for anything else. */
  public static StartPosition startPosition(String s) {
    switch (s) {
      case "earliest":
        return StartPosition.earliest();
      case "latest":
        return StartPosition.latest();
      default:
        try {
          return StartPosition.at(Instant.parse(s));
        } catch (DateTimeParseException e) {
          throw new IllegalArgumentException(s);
        }
    }
  }
}
