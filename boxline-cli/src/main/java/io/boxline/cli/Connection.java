package io.boxline.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import io.boxline.Boxline;
import io.boxline.StoreException;
import io.boxline.jdbc.JdbcStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * Where the database is, as every subcommand takes it: a flag, else an environment variable, else
 * the profile file {@code ~/.config/boxline/<profile>.properties} (keys {@code url}, {@code user},
 * {@code schema}, {@code tablePrefix}). The password never comes from a flag value or a file: it is
 * {@code BOXLINE_PASSWORD}, or typed at the prompt of {@code --password} (not echoed).
 */
final class Connection {
  @Option(
      names = "--url",
      paramLabel = "JDBC-URL",
      description =
          "JDBC URL of the database (env BOXLINE_URL), e.g. jdbc:postgresql://db:5432/app")
  String url;

  @Option(names = "--user", description = "database user (env BOXLINE_USER)")
  String user;

  @Option(
      names = "--password",
      interactive = true,
      arity = "0",
      description = "ask for the database password (not echoed); else env BOXLINE_PASSWORD")
  char[] password;

  @Option(
      names = "--schema",
      description = "schema of Boxline's tables (env BOXLINE_SCHEMA; default boxline)")
  String schema;

  @Option(
      names = "--table-prefix",
      description =
          "prefix of Boxline's table names, as the application configured it (default none)")
  String tablePrefix;

  @Option(
      names = "--profile",
      description =
          "profile file ~/.config/boxline/<name>.properties (env BOXLINE_PROFILE; default"
              + " 'default' when that file exists)")
  String profile;

  /** A database session of one command: closed at the end of it. */
  static final class Session implements AutoCloseable {
    final HikariDataSource pool;
    final Boxline boxline;

    Session(HikariDataSource pool, Boxline boxline) {
      this.pool = pool;
      this.boxline = boxline;
    }

    @Override
    public void close() {
      boxline.close();
      pool.close();
    }
  }

  /**
   * Connects, starts Boxline (sequencer off unless {@code configure} turns it on) and checks that
   * its schema is there; the schema is never migrated except by {@code boxline migrate}.
   */
  Session open(java.util.function.UnaryOperator<Boxline.Builder> configure) {
    return connect(configure, false);
  }

  /** For {@code boxline migrate}: no schema check, migrations on (applied by start()). */
  Session openForMigration() {
    return connect(b -> b.migrate(true), true);
  }

  private Session connect(
      java.util.function.UnaryOperator<Boxline.Builder> configure, boolean migrating) {
    Properties file = profileFile();
    String jdbcUrl = first(url, System.getenv("BOXLINE_URL"), file.getProperty("url"));
    if (jdbcUrl == null) {
      throw new CliException(
          ExitCodes.CANNOT_CONNECT,
          "no database given: pass --url jdbc:postgresql://host:5432/db, set BOXLINE_URL, or write"
              + " url= in "
              + profilePath(profileName()));
    }
    if (!jdbcUrl.startsWith("jdbc:")) {
      throw new CliException(
          ExitCodes.CANNOT_CONNECT,
          "'"
              + jdbcUrl
              + "' is not a JDBC URL; it starts with jdbc:, e.g. jdbc:postgresql://host:5432/db");
    }
    String who = first(user, System.getenv("BOXLINE_USER"), file.getProperty("user"));
    String secret = password != null ? new String(password) : System.getenv("BOXLINE_PASSWORD");
    String schemaName =
        first(schema, System.getenv("BOXLINE_SCHEMA"), file.getProperty("schema"), "boxline");
    String prefix = first(tablePrefix, file.getProperty("tablePrefix"));
    prefix = prefix == null ? "" : prefix;

    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(jdbcUrl);
    c.setUsername(who);
    c.setPassword(secret);
    c.setMaximumPoolSize(6);
    c.setMinimumIdle(0);
    c.setPoolName("boxline-cli");
    c.setConnectionTimeout(10_000);
    c.setInitializationFailTimeout(1); // fail now, with the driver's reason, not on first use
    HikariDataSource pool;
    try {
      pool = new HikariDataSource(c);
    } catch (HikariPool.PoolInitializationException | IllegalArgumentException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new CliException(
          ExitCodes.CANNOT_CONNECT,
          "cannot connect to "
              + jdbcUrl
              + ": "
              + Failures.oneLine(cause.getMessage())
              + " (check the URL, the user and BOXLINE_PASSWORD)");
    } catch (RuntimeException e) {
      throw new CliException(
          ExitCodes.CANNOT_CONNECT,
          "cannot connect to " + jdbcUrl + ": " + Failures.oneLine(e.getMessage()));
    }
    Boxline boxline = null;
    try {
      JdbcStore.Builder store = JdbcStore.builder(pool).schema(schemaName);
      if (!prefix.isEmpty()) {
        store.tablePrefix(prefix);
      }
      Boxline.Builder b =
          Boxline.builder()
              .store(store.build())
              .migrate(false)
              .sequencer(false)
              .instanceId("boxline-cli-" + ProcessHandle.current().pid());
      boxline = configure.apply(b).build();
      if (!migrating) {
        // Admin needs a started Boxline: with the sequencer off that is a wake-up listener and
        // nothing else that writes.
        boxline.start();
        boxline.admin().namespaces(); // is the schema there?
      }
    } catch (StoreException e) {
      boxline.close(); // its listener first, so that closing the pool is not a lost connection
      pool.close();
      throw new CliException(
          ExitCodes.CANNOT_CONNECT,
          "no Boxline schema '"
              + schemaName
              + "' at "
              + jdbcUrl
              + " ("
              + Failures.oneLine(Failures.messageOf(e))
              + "); pass --schema, or create it with 'boxline migrate'");
    } catch (RuntimeException e) {
      if (boxline != null) {
        boxline.close();
      }
      pool.close();
      throw e;
    }
    return new Session(pool, boxline);
  }

  Session open() {
    return open(b -> b);
  }

  private String profileName() {
    return first(profile, System.getenv("BOXLINE_PROFILE"), "default");
  }

  static Path profilePath(String name) {
    String dir = System.getenv("BOXLINE_CONFIG_DIR");
    Path base =
        dir != null ? Path.of(dir) : Path.of(System.getProperty("user.home"), ".config", "boxline");
    return base.resolve(name + ".properties");
  }

  private Properties profileFile() {
    Properties p = new Properties();
    String name = profileName();
    Path path = profilePath(name);
    if (!Files.exists(path)) {
      if (profile != null || System.getenv("BOXLINE_PROFILE") != null) {
        throw new CliException(
            ExitCodes.CANNOT_CONNECT,
            "profile '" + name + "' not found: " + path + " does not exist");
      }
      return p;
    }
    try (InputStream in = Files.newInputStream(path)) {
      p.load(in);
    } catch (IOException e) {
      throw new CliException(
          ExitCodes.CANNOT_CONNECT, "cannot read profile " + path + ": " + e.getMessage());
    }
    if (p.containsKey("password")) {
      throw new CliException(
          ExitCodes.USAGE,
          "profile "
              + path
              + " holds a password; remove it and set BOXLINE_PASSWORD or pass --password");
    }
    return p;
  }

  private static String first(String... values) {
    for (String v : values) {
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    return null;
  }
}
