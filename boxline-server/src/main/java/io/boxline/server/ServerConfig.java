package io.boxline.server;

import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.TopicName;
import io.boxline.server.internal.ConfigReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything a {@link BoxlineServer} runs, as read from its YAML file ({@link #load(Path)}); the
 * file format is described in docs/guide/server.md. Values are validated when read: a config that
 * loads is one the server can start with.
 *
 * @param source where the config came from (a file path, or "--dev")
 * @param http the HTTP listener
 * @param database where events live; no URL only with {@code --dev}: a throwaway embedded
 *     PostgreSQL
 * @param tokens who may call the API; empty only when {@code auth.disabled} is true
 * @param authDisabled every request is treated as an admin of every namespace (for a laptop only)
 * @param namespaces namespaces created at start when missing
 * @param topics topics created at start when missing (an existing one must match)
 * @param subscriptions subscriptions created at start when missing (an existing one must match)
 * @param relays relays this server runs (each a member of its subscription's consumer group)
 * @param defaultGroupPolicy the cluster default group policy, set at start when given
 * @param log how the server process logs (applied by its {@code main}; an application that embeds
 *     the server configures its own logging)
 * @param kafka the Kafka protocol listener, or empty when the config has no {@code kafka} section
 *     (off by default)
 */
public record ServerConfig(
    String source,
    Http http,
    Database database,
    List<Token> tokens,
    boolean authDisabled,
    List<NamespacePath> namespaces,
    List<Topic> topics,
    List<Subscription> subscriptions,
    List<RelaySpec> relays,
    Optional<GroupPolicy> defaultGroupPolicy,
    Log log,
    Optional<Kafka> kafka) {

  /**
   * Reads and validates a YAML file; {@code ${NAME}} and {@code ${NAME:-default}} read the
   * environment. It must name its database ({@code database.url}).
   */
  public static ServerConfig load(Path file) {
    return ConfigReader.read(file, System.getenv());
  }

  /** Reads and validates YAML text; {@code source} names it in errors. */
  public static ServerConfig parse(String yaml, String source, Map<String, String> environment) {
    return ConfigReader.parse(yaml, source, environment);
  }

  /**
   * @param host address to bind (default 127.0.0.1; 0.0.0.0 for every interface)
   * @param port port (default 8080; 0 picks a free one)
   * @param maxBodyBytes largest request body accepted (default 4 MiB); larger gets 413
   * @param threads request threads (default 32); server-sent-event streams take one each
   * @param maxStreams open tail streams at most (default 16; more get 503)
   * @param shutdownTimeout how long SIGTERM waits for in-flight requests, relays and consumers
   *     (default 20 s)
   * @param protectMetrics require a token for {@code *} with read access for {@code /metrics}
   *     (default true: the metrics name every tenant's topics and subscriptions)
   * @param console serve the web console under {@code /console/} (default true)
   * @param keystore PKCS#12 keystore for TLS, or empty for plain HTTP
   * @param keystorePassword the keystore's password
   * @param idleTimeout a connection that sends nothing for this long is closed (default 60 s; an
   *     unfinished request holds no thread meanwhile)
   * @param bodyTimeout a request body must arrive in full within this (default 30 s), else 408
   * @param maxConnections open connections at most (default 2048); past it new ones wait in the
   *     accept queue
   * @param gzip compress answers of 1 KiB or more (JSON, the console's files) for clients that send
   *     {@code Accept-Encoding: gzip} (default true); tail streams are never compressed
   * @param h2c also speak HTTP/2 over cleartext on the same port, by prior knowledge or upgrade
   *     (default false); not with TLS
   */
  public record Http(
      String host,
      int port,
      int maxBodyBytes,
      int threads,
      int maxStreams,
      Duration shutdownTimeout,
      boolean protectMetrics,
      boolean console,
      Optional<Path> keystore,
      String keystorePassword,
      Duration idleTimeout,
      Duration bodyTimeout,
      int maxConnections,
      boolean gzip,
      boolean h2c) {}

  /**
   * The Kafka protocol listener (docs/guide/kafka-protocol.md): Kafka clients produce to and
   * consume Boxline topics, with consumer groups as subscriptions.
   *
   * @param host address to bind (default: the HTTP listener's host)
   * @param port port (required; 0 picks a free one)
   * @param advertisedHost the host clients are told to connect to in metadata answers (default:
   *     {@code host}, or 127.0.0.1 when that is 0.0.0.0)
   * @param maxRequestBytes largest request frame accepted (default 16 MiB); a larger one closes the
   *     connection
   * @param tls speak TLS with the HTTP listener's keystore (default false)
   * @param sessionTimeoutMax the longest session timeout a group member may ask for (default 5 min)
   * @param nodeTimeout how long an instance that stopped checking in keeps its node id and its
   *     groups before the other instances on the database take them over (default 10 s)
   */
  public record Kafka(
      String host,
      int port,
      String advertisedHost,
      int maxRequestBytes,
      boolean tls,
      Duration sessionTimeoutMax,
      Duration nodeTimeout) {}

  /** How log lines are written: {@code text} (one key=value line) or {@code json} (one object). */
  public enum LogFormat {
    TEXT,
    JSON
  }

  /**
   * The server process's logging: every line (Boxline, Jetty, the connection pool, the drivers) in
   * one format on standard error.
   *
   * @param format text (default) or json, one object per line
   * @param level the level of every logger (default INFO): TRACE, DEBUG, INFO, WARN, ERROR or OFF
   * @param levels levels of single loggers (and the loggers under them), e.g. {@code
   *     org.eclipse.jetty: WARN}
   * @param access one line per request at INFO on the logger {@code io.boxline.server.access}
   *     (default true)
   */
  public record Log(LogFormat format, String level, Map<String, String> levels, boolean access) {
    /** The defaults: text, INFO, the access log on. */
    public static final Log DEFAULT = new Log(LogFormat.TEXT, "INFO", Map.of(), true);
  }

  /**
   * @param url JDBC URL of PostgreSQL, MariaDB/MySQL or H2; required, except with {@code --dev},
   *     where it is empty and the server starts a throwaway embedded PostgreSQL
   * @param user user name (from the environment, e.g. {@code ${DB_USER}})
   * @param password password (from the environment; never logged)
   * @param schema schema (PostgreSQL, H2) or database (MariaDB) for Boxline's tables
   * @param poolSize connections at most (default 16)
   * @param migrate whether the server applies Boxline's migrations at start (default true); false
   *     for a database user with data privileges only, the schema migrated by its owner
   * @param replicas streaming replicas of the database that answer reads of the log (consumers'
   *     fetches, tails, the Kafka API's fetches, browsing); default none
   * @param replicaWait how long a read waits for replicas that lag behind the newest events before
   *     the primary answers it (default 100ms)
   */
  public record Database(
      Optional<String> url,
      String user,
      String password,
      String schema,
      int poolSize,
      boolean migrate,
      List<Replica> replicas,
      Duration replicaWait) {
    @Override
    public String toString() {
      return "Database[url="
          + url.orElse("(--dev: throwaway embedded PostgreSQL)")
          + ", user="
          + user
          + "]";
    }
  }

  /**
   * A read replica of the database.
   *
   * @param url JDBC URL of the replica
   * @param user user name (default: none)
   * @param password password (from the environment; never logged)
   * @param poolSize connections at most (default 16)
   */
  public record Replica(String url, String user, String password, int poolSize) {
    @Override
    public String toString() {
      return "Replica[url=" + url.replaceFirst("\\?.*", "?…") + ", user=" + user + "]";
    }
  }

  /** The roles a token can have, from most to least powerful. */
  public enum Role {
    /** Everything in its namespaces: create, delete, rewind, policies, plus what the others do. */
    ADMIN,
    /** Read everything in its namespaces, redrive and discard dead letters. */
    OPERATOR,
    /** Read everything of the admin API in its namespaces, change nothing (dashboards, on-call). */
    VIEWER,
    /** Publish to topics in its namespaces. */
    PRODUCER,
    /** Read and tail topics in its namespaces. */
    CONSUMER
  }

  /**
   * A bearer token.
   *
   * @param name shown in logs instead of the secret
   * @param secret the token's value (at least 16 characters)
   * @param role what it may do
   * @param namespaces namespace prefixes it may touch: {@code acme} covers {@code acme} and {@code
   *     acme/billing}; {@code *} covers every namespace (and the cluster-wide settings)
   */
  public record Token(String name, String secret, Role role, List<String> namespaces) {
    @Override
    public String toString() {
      return "Token[" + name + ", " + role + ", " + namespaces + "]";
    }
  }

  public record Topic(
      TopicName name, int partitions, Sequencing sequencing, Optional<RetentionPolicy> retention) {}

  /**
   * A subscription the server creates or checks at start.
   *
   * @param members how its members (HTTP ones and the handler program's) are retried and
   *     dead-lettered
   * @param handler the program this server runs as the subscription's consumer, if any
   */
  public record Subscription(
      String name,
      List<TopicName> topics,
      StartPosition start,
      Optional<GroupPolicy> groupPolicy,
      io.boxline.MemberPolicy members,
      Optional<HandlerSpec> handler) {}

  /**
   * A program the server runs as members of a subscription's consumer group, one process per member
   * ({@link io.boxline.exec.Program}).
   *
   * @param command run with {@code sh -c}
   * @param directory its working directory, or empty for the server's
   * @param environment variables added to the server's environment
   * @param processes members in the group, each with a process of its own
   * @param perEvent a process per event (its exit status answers) instead of a long-running one
   * @param replyTimeout how long one event may take
   * @param restartBackoff the first wait before a crashed process starts again (it doubles)
   * @param maxRestartBackoff the longest such wait
   * @param stopTimeout how long a stopping process may take to end at end of input
   * @param limits the resource limits of each process
   */
  public record HandlerSpec(
      String command,
      Optional<Path> directory,
      Map<String, String> environment,
      int processes,
      boolean perEvent,
      Duration replyTimeout,
      Duration restartBackoff,
      Duration maxRestartBackoff,
      Duration stopTimeout,
      io.boxline.exec.ProgramLimits limits) {}

  /**
   * A relay: the subscription's events go to one sink.
   *
   * @param name shown in logs and metrics
   * @param subscription the subscription it consumes (created by this config or already there)
   * @param kind webhook, kafka, rabbitmq or nats
   * @param settings the sink's settings (validated per kind when read)
   * @param batchSize events per batch (default 100)
   * @param concurrency partitions sent at once (default 4)
   */
  public record RelaySpec(
      String name,
      String subscription,
      String kind,
      Map<String, String> settings,
      int batchSize,
      int concurrency) {
    @Override
    public String toString() {
      return "Relay[" + name + ", " + kind + ", " + subscription + "]";
    }
  }
}
