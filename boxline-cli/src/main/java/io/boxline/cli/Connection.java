package io.boxline.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import io.boxline.Admin;
import io.boxline.Boxline;
import io.boxline.DeadLetterQuery;
import io.boxline.DeadLetters;
import io.boxline.NotFoundException;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.StoreException;
import io.boxline.client.BoxlineClient;
import io.boxline.client.RemoteDeadLetters;
import io.boxline.jdbc.JdbcStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * Where Boxline is, as every subcommand takes it: a database ({@code --url}) or a Boxline server
 * ({@code --server}), from a flag, else an environment variable, else the profile file {@code
 * ~/.config/boxline/<profile>.properties} (keys {@code url}, {@code user}, {@code schema}, {@code
 * tablePrefix}, {@code server}). Secrets never come from a flag value or a file: the password is
 * {@code BOXLINE_PASSWORD} or typed at the prompt of {@code --password}, the server's token {@code
 * BOXLINE_TOKEN} or typed at the prompt of {@code --token} (neither echoed).
 */
final class Connection {
  @Option(
      names = "--url",
      paramLabel = "JDBC-URL",
      description =
          "JDBC URL of the database (env BOXLINE_URL), e.g. jdbc:postgresql://db:5432/app")
  String url;

  @Option(
      names = "--server",
      paramLabel = "URL",
      description =
          "a Boxline server instead of the database (env BOXLINE_SERVER), e.g."
              + " https://boxline.internal:8080")
  String server;

  @Option(
      names = "--token",
      interactive = true,
      arity = "0",
      prompt = "Token: ",
      description = "ask for the server's bearer token (not echoed); else env BOXLINE_TOKEN")
  char[] token;

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

  /**
   * What one command works with, over a database or a server: closed at the end of the command.
   * {@link #admin()}, {@link #deadLetters()} and {@link #publish} work over both; {@link
   * #boxline()} (consumers, migrations) only over a database.
   */
  static final class Session implements AutoCloseable {
    private final HikariDataSource pool;
    private final Boxline boxline;
    private final BoxlineClient server;
    private final Admin admin;
    private final RemoteDeadLetters deadLetters;

    /** Over a database. */
    Session(HikariDataSource pool, Boxline boxline) {
      this.pool = pool;
      this.boxline = boxline;
      this.server = null;
      this.admin = null; // boxline.admin() once started
      this.deadLetters = null;
    }

    /** Over a server. */
    Session(BoxlineClient server) {
      this.pool = null;
      this.boxline = null;
      this.server = server;
      this.admin = server.admin();
      this.deadLetters = server.deadLetters();
    }

    boolean overServer() {
      return server != null;
    }

    /** The server's client, or null over a database. */
    BoxlineClient server() {
      return server;
    }

    Admin admin() {
      return admin != null ? admin : boxline.admin();
    }

    DeadLetters deadLetters() {
      return deadLetters != null ? deadLetters : boxline.deadLetters();
    }

    /** How many dead letters match: over a server one dry-run request, not the list. */
    int countDeadLetters(DeadLetterQuery q) {
      return deadLetters != null ? deadLetters.count(q) : deadLetters().list(q).size();
    }

    /** Publishes {@code events} (one topic) in one transaction: all or none. */
    List<PublishResult> publish(List<OutgoingEvent> events) {
      if (server != null) {
        return server.publisher().publishAll(events);
      }
      return boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, events));
    }

    /** The Boxline of a database session; over a server, a refusal naming {@code what}. */
    Boxline boxline(String what) {
      if (boxline == null) {
        throw needsDatabase(what);
      }
      return boxline;
    }

    @Override
    public void close() {
      if (server != null) {
        server.close();
      }
      if (boxline != null) {
        boxline.close();
      }
      if (pool != null) {
        pool.close();
      }
    }
  }

  /** The refusal for what only a database connection offers. */
  static CliException needsDatabase(String what) {
    return new CliException(
        ExitCodes.USAGE,
        what
            + " needs a database connection (--url): a Boxline server does not offer it over"
            + " HTTP");
  }

  /**
   * Connects to the server (checking the token), or to the database: starts Boxline (sequencer off
   * unless {@code configure} turns it on) and checks that its schema is there; the schema is never
   * migrated except by {@code boxline migrate}.
   */
  Session open(java.util.function.UnaryOperator<Boxline.Builder> configure) {
    return connect(configure, false);
  }

  /** For {@code boxline migrate}: no schema check, migrations on (applied by start()). */
  Session openForMigration() {
    return connect(b -> b.migrate(true), true);
  }

  /** Whether the command talks to a server: a flag, else the environment, else the profile. */
  boolean overServer() {
    return target(profileFile()).server;
  }

  private record Target(boolean server, String url) {}

  /**
   * The database's JDBC URL or the server's URL: the first of flags, environment and profile that
   * names either decides; naming both at one level is refused.
   */
  private Target target(Properties file) {
    String[][] levels = {
      {url, server, "--url and --server"},
      {
        System.getenv("BOXLINE_URL"),
        System.getenv("BOXLINE_SERVER"),
        "BOXLINE_URL and BOXLINE_SERVER"
      },
      {
        file.getProperty("url"),
        file.getProperty("server"),
        "url= and server= in " + profilePath(profileName())
      }
    };
    for (String[] level : levels) {
      String db = first(level[0]);
      String srv = first(level[1]);
      if (db != null && srv != null) {
        throw new CliException(
            ExitCodes.USAGE,
            "both "
                + level[2]
                + " are given; name either the database (--url) or a Boxline server (--server)");
      }
      if (srv != null) {
        return new Target(true, srv);
      }
      if (db != null) {
        return new Target(false, db);
      }
    }
    throw new CliException(
        ExitCodes.CANNOT_CONNECT,
        "no database or server given: pass --url jdbc:postgresql://host:5432/db or --server"
            + " https://host:8080, set BOXLINE_URL or BOXLINE_SERVER, or write url= or server= in "
            + profilePath(profileName()));
  }

  private Session connect(
      java.util.function.UnaryOperator<Boxline.Builder> configure, boolean migrating) {
    Properties file = profileFile();
    Target target = target(file);
    if (target.server) {
      return connectServer(target.url);
    }
    String jdbcUrl = target.url;
    if (!jdbcUrl.startsWith("jdbc:")) {
      throw new CliException(
          ExitCodes.CANNOT_CONNECT,
          "'"
              + jdbcUrl
              + "' is not a JDBC URL; it starts with jdbc:, e.g. jdbc:postgresql://host:5432/db"
              + (jdbcUrl.startsWith("http://") || jdbcUrl.startsWith("https://")
                  ? " (for a Boxline server, pass --server)"
                  : ""));
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

  /**
   * A server session: the URL must be http(s); {@code GET /v1/whoami} checks that the server
   * answers and knows the token, so that a wrong token or a server that is down fails here, in one
   * line, whatever the command.
   */
  private Session connectServer(String serverUrl) {
    if (!(serverUrl.startsWith("http://") || serverUrl.startsWith("https://"))) {
      throw new CliException(
          ExitCodes.CANNOT_CONNECT,
          "'"
              + serverUrl
              + "' is not a server URL; it starts with http:// or https://, e.g."
              + " https://boxline.internal:8080"
              + (serverUrl.startsWith("jdbc:") ? " (for a database, pass --url)" : ""));
    }
    String secret = token != null ? new String(token) : System.getenv("BOXLINE_TOKEN");
    BoxlineClient client;
    try {
      client = BoxlineClient.builder().url(serverUrl).token(secret).build();
    } catch (IllegalArgumentException e) {
      throw new CliException(ExitCodes.CANNOT_CONNECT, e.getMessage());
    }
    try {
      client.whoami();
    } catch (NotFoundException e) {
      client.close();
      throw new CliException(
          ExitCodes.CANNOT_CONNECT,
          client.url()
              + " has no Boxline API (GET /v1/whoami answered 404): pass the server's base URL,"
              + " e.g. https://boxline.internal:8080");
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
    return new Session(client);
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
    if (p.containsKey("token")) {
      throw new CliException(
          ExitCodes.USAGE,
          "profile " + path + " holds a token; remove it and set BOXLINE_TOKEN or pass --token");
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
