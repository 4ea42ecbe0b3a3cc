package io.boxline.server.internal;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.server.ServerConfig;
import java.io.IOException;
import java.lang.System.Logger.Level;
import javax.sql.DataSource;

/**
 * The server's connection pool, on the configured database, or, with {@code --dev} only (the one
 * way to a config without {@code database.url}), on a throwaway embedded PostgreSQL.
 */
final class Database implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("io.boxline.server");
  private DevPostgres embedded;
  private HikariDataSource pool;
  private final java.util.List<HikariDataSource> replicas = new java.util.ArrayList<>();
  final String description;

  Database(ServerConfig.Database config) throws IOException {
    String url;
    String user = config.user();
    String password = config.password();
    if (config.url().isPresent()) {
      url = config.url().get();
      description = redact(url);
    } else {
      LOG.log(
          Level.WARNING,
          "DEV MODE (--dev): starting a throwaway embedded PostgreSQL. Every topic, event and"
              + " subscription is THROWN AWAY when the server stops. Not for anything you want to"
              + " keep: set database.url in a config and run without --dev.");
      embedded = DevPostgres.start();
      url = embedded.jdbcUrl;
      user = "postgres";
      password = "";
      description =
          "throwaway embedded PostgreSQL on port "
              + embedded.port
              + " (--dev: its data is thrown away when the server stops)";
    }
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url);
    if (!user.isEmpty()) {
      cfg.setUsername(user);
    }
    if (!password.isEmpty()) {
      cfg.setPassword(password);
    }
    cfg.setMaximumPoolSize(config.poolSize());
    cfg.setMinimumIdle(Math.min(2, config.poolSize()));
    cfg.setConnectionTimeout(10_000);
    cfg.setPoolName("boxline-server");
    try {
      pool = new HikariDataSource(cfg);
      for (int i = 0; i < config.replicas().size(); i++) {
        replicas.add(replicaPool(config.replicas().get(i), i + 1));
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * A replica's pool: it may be down when the server starts (the store skips it until it answers),
   * and a short connection timeout bounds how long a read waits on one that cannot be reached.
   */
  private static HikariDataSource replicaPool(ServerConfig.Replica replica, int n) {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(replica.url());
    if (!replica.user().isEmpty()) {
      cfg.setUsername(replica.user());
    }
    if (!replica.password().isEmpty()) {
      cfg.setPassword(replica.password());
    }
    cfg.setMaximumPoolSize(replica.poolSize());
    cfg.setMinimumIdle(Math.min(2, replica.poolSize()));
    cfg.setConnectionTimeout(2_000);
    cfg.setInitializationFailTimeout(-1);
    cfg.setReadOnly(true);
    cfg.setPoolName("boxline-replica-" + n);
    return new HikariDataSource(cfg);
  }

  DataSource dataSource() {
    return pool;
  }

  /** The read replicas' pools, in the config's order. */
  java.util.List<DataSource> replicas() {
    return java.util.List.copyOf(replicas);
  }

  /** The URL without its query string, which may hold a password. */
  static String redact(String url) {
    int q = url.indexOf('?');
    return q < 0 ? url : url.substring(0, q) + "?…";
  }

  @Override
  public void close() {
    replicas.forEach(HikariDataSource::close);
    if (pool != null) {
      pool.close();
    }
    if (embedded != null) {
      try {
        embedded.close();
      } catch (IOException e) {
        LOG.log(Level.WARNING, "embedded PostgreSQL did not stop cleanly", e);
      }
    }
  }
}
