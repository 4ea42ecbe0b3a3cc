package io.boxline.server.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.boxline.GroupPolicy;
import io.boxline.MemberPolicy;
import io.boxline.NamespacePath;
import io.boxline.RetentionPolicy;
import io.boxline.RetryPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.TopicName;
import io.boxline.server.ConfigException;
import io.boxline.server.ServerConfig;
import io.boxline.server.ServerConfig.Role;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads the server's YAML config into a {@link ServerConfig}: unknown keys, wrong types, missing
 * environment variables and impossible values are refused with the file, the key and the fix.
 */
public final class ConfigReader {
  /** Extra admin token from the environment, so a quick start needs no file. */
  public static final String ADMIN_TOKEN_VARIABLE = "BOXLINE_ADMIN_TOKEN";

  private static final List<String> KINDS = List.of("webhook", "kafka", "rabbitmq", "nats");
  private static final Map<String, Set<String>> SINK_KEYS =
      Map.of(
          "webhook", Set.of("url", "secret", "standardWebhooksSecret", "requestTimeout"),
          "kafka", Set.of("bootstrapServers", "topic"),
          "rabbitmq", Set.of("uri", "exchange", "routingKey"),
          "nats", Set.of("servers", "subject", "stream"));
  private static final Map<String, String> SINK_REQUIRED =
      Map.of("webhook", "url", "kafka", "bootstrapServers", "rabbitmq", "uri", "nats", "servers");

  private final String source;
  private final Map<String, String> env;

  /** False for request bodies: ${...} there is text, not a variable. */
  private final boolean expand;

  /**
   * {@code --dev}: the config has no {@code database.url} and the server runs on a throwaway
   * embedded PostgreSQL; without it a config must name its database.
   */
  private final boolean dev;

  private ConfigReader(String source, Map<String, String> env, boolean expand, boolean dev) {
    this.source = source;
    this.env = env;
    this.expand = expand;
    this.dev = dev;
  }

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
    JsonNode root;
    try {
      root = new ObjectMapper(new YAMLFactory()).readTree(yaml);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new ConfigException(
          source,
          "",
          "is not valid YAML: " + e.getOriginalMessage().lines().findFirst().orElse(""));
    } catch (IOException e) {
      throw new ConfigException(source, "", "cannot be read: " + e.getMessage());
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      root = new ObjectMapper().createObjectNode();
    }
    ConfigReader reader = new ConfigReader(source, env, true, dev);
    return reader.config(reader.node(root, ""));
  }

  /**
   * {@code --dev} without a file: the defaults on a throwaway embedded PostgreSQL, the token from
   * {@code BOXLINE_ADMIN_TOKEN}.
   */
  public static ServerConfig dev(Map<String, String> env) {
    return parse("", "--dev", env, true);
  }

  /** The value at {@code path}, read as this reader reads (its source, environment, expansion). */
  private ConfigNode node(JsonNode json, String path) {
    return new ConfigNode(json, path, source, env, expand);
  }

  private ServerConfig config(ConfigNode root) {
    root.object();
    root.only(
        "http",
        "database",
        "auth",
        "tokens",
        "namespaces",
        "topics",
        "subscriptions",
        "relays",
        "groupPolicy",
        "log");
    ServerConfig.Http http = http(root.get("http"));
    ServerConfig.Log log = log(root.get("log"));
    ServerConfig.Database db = database(root.get("database"));
    ConfigNode auth = root.get("auth");
    auth.only("disabled");
    boolean authDisabled = auth.bool("disabled", false);
    List<ServerConfig.Token> tokens = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (ConfigNode t : root.get("tokens").list()) {
      ServerConfig.Token token = token(t);
      if (!names.add(token.name())) {
        throw t.get("name")
            .error("token name '" + token.name() + "' is used twice; names must differ");
      }
      tokens.add(token);
    }
    String adminToken = env.get(ADMIN_TOKEN_VARIABLE);
    if (adminToken != null && !adminToken.isEmpty()) {
      requireSecret(adminToken, node(MissingNode.getInstance(), "$" + ADMIN_TOKEN_VARIABLE));
      tokens.add(
          new ServerConfig.Token("$" + ADMIN_TOKEN_VARIABLE, adminToken, Role.ADMIN, List.of("*")));
    }
    if (authDisabled && !tokens.isEmpty()) {
      throw auth.get("disabled")
          .error(
              "is true while tokens are declared (or "
                  + ADMIN_TOKEN_VARIABLE
                  + " is set); remove one or the other");
    }
    if (tokens.isEmpty() && !authDisabled) {
      throw new ConfigException(
          source,
          "tokens",
          "no token is declared, so nobody could call the API; declare tokens (see"
              + " docs/guide/server.md), set the environment variable "
              + ADMIN_TOKEN_VARIABLE
              + ", or set auth.disabled: true on a machine nobody else can reach");
    }
    List<NamespacePath> namespaces = new ArrayList<>();
    for (ConfigNode n : root.get("namespaces").list()) {
      namespaces.add(n.parse(s -> NamespacePath.of(s)));
    }
    List<ServerConfig.Topic> topics = new ArrayList<>();
    Set<TopicName> topicNames = new HashSet<>();
    for (ConfigNode t : root.get("topics").list()) {
      ServerConfig.Topic topic = topic(t);
      if (!topicNames.add(topic.name())) {
        throw t.get("name").error("topic " + topic.name() + " is declared twice");
      }
      topics.add(topic);
    }
    List<ServerConfig.Subscription> subscriptions = new ArrayList<>();
    Set<String> subscriptionNames = new HashSet<>();
    for (ConfigNode s : root.get("subscriptions").list()) {
      ServerConfig.Subscription sub = subscription(s);
      if (!subscriptionNames.add(sub.name())) {
        throw s.get("name").error("subscription '" + sub.name() + "' is declared twice");
      }
      subscriptions.add(sub);
    }
    List<ServerConfig.RelaySpec> relays = new ArrayList<>();
    Set<String> relayNames = new HashSet<>();
    for (ConfigNode r : root.get("relays").list()) {
      ServerConfig.RelaySpec relay = relay(r);
      if (!relayNames.add(relay.name())) {
        throw r.get("name").error("relay '" + relay.name() + "' is declared twice");
      }
      relays.add(relay);
    }
    Optional<GroupPolicy> policy =
        root.has("groupPolicy")
            ? Optional.of(groupPolicy(root.get("groupPolicy")))
            : Optional.empty();
    // Checked last, so that what else is wrong with a file comes first.
    if (db.url().isEmpty() && !dev) {
      throw root.get("database").get("url").error(NO_DATABASE);
    }
    if (db.url().isPresent() && dev) {
      throw root.get("database")
          .get("url")
          .error(
              "is set, but --dev runs on a throwaway embedded PostgreSQL; run without --dev to use"
                  + " this database, or remove database.url to try the server out");
    }
    return new ServerConfig(
        source,
        http,
        db,
        List.copyOf(tokens),
        authDisabled,
        List.copyOf(namespaces),
        List.copyOf(topics),
        List.copyOf(subscriptions),
        List.copyOf(relays),
        policy,
        log);
  }

  private static final List<String> LEVELS =
      List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");

  private ServerConfig.Log log(ConfigNode n) {
    n.only("format", "level", "levels", "access");
    ServerConfig.LogFormat format =
        n.has("format")
            ? n.get("format")
                .parse(
                    s -> ServerConfig.LogFormat.valueOf(s.toUpperCase(Locale.ROOT)), "text or json")
            : ServerConfig.LogFormat.TEXT;
    String level = n.has("level") ? level(n.get("level")) : "INFO";
    ConfigNode levels = n.get("levels");
    levels.object();
    Map<String, String> byLogger = new LinkedHashMap<>();
    for (Iterator<String> it = levels.json.fieldNames(); it.hasNext(); ) {
      String logger = it.next();
      byLogger.put(logger, level(levels.get(logger)));
    }
    return new ServerConfig.Log(format, level, Map.copyOf(byLogger), n.bool("access", true));
  }

  private static String level(ConfigNode n) {
    return n.parse(
        s -> {
          String l = s.toUpperCase(Locale.ROOT);
          if (l.equals("WARNING")) {
            return "WARN";
          }
          if (!LEVELS.contains(l)) {
            throw new IllegalArgumentException(s);
          }
          return l;
        },
        "trace, debug, info, warn, error or off");
  }

  private ServerConfig.Http http(ConfigNode n) {
    n.only(
        "host",
        "port",
        "maxBodyBytes",
        "threads",
        "maxStreams",
        "shutdownTimeout",
        "protectMetrics",
        "console",
        "keystore",
        "keystorePassword",
        "idleTimeout",
        "bodyTimeout",
        "maxConnections",
        "gzip",
        "h2c");
    Optional<Path> keystore = n.optionalText("keystore").map(Path::of);
    String password = n.text("keystorePassword", "");
    if (keystore.isPresent() && !Files.isReadable(keystore.get())) {
      throw n.get("keystore")
          .error("cannot read " + keystore.get() + "; give the path of a PKCS#12 file");
    }
    int threads = n.integer("threads", 32, 4, 1024);
    // A waiting tail holds no thread, only its connection and a few hundred bytes.
    int maxStreams = n.integer("maxStreams", 1000, 1, 100_000);
    return new ServerConfig.Http(
        n.text("host", "127.0.0.1"),
        n.integer("port", 8080, 0, 65_535),
        n.integer("maxBodyBytes", 4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
        threads,
        maxStreams,
        n.duration("shutdownTimeout", Duration.ofSeconds(20)),
        n.bool("protectMetrics", true),
        n.bool("console", true),
        keystore,
        password,
        n.duration("idleTimeout", Duration.ofSeconds(60)),
        n.duration("bodyTimeout", Duration.ofSeconds(30)),
        n.integer("maxConnections", 2048, 16, 1_000_000),
        n.bool("gzip", true),
        h2c(n, keystore));
  }

  private static boolean h2c(ConfigNode n, Optional<Path> keystore) {
    boolean h2c = n.bool("h2c", false);
    if (h2c && keystore.isPresent()) {
      throw n.get("h2c")
          .error(
              "is HTTP/2 over cleartext, but a keystore is set (TLS); remove one of them (HTTP/2"
                  + " over TLS is not offered yet)");
    }
    return h2c;
  }

  private ServerConfig.Database database(ConfigNode n) {
    n.only("url", "user", "password", "schema", "poolSize", "migrate");
    Optional<String> url = n.optionalText("url");
    if (url.isPresent() && !url.get().startsWith("jdbc:")) {
      throw n.get("url")
          .error(
              "'"
                  + url.get()
                  + "' is not a JDBC URL; write e.g. jdbc:postgresql://127.0.0.1:5432/app");
    }
    String schema = n.text("schema", "boxline");
    if (n.has("schema")) {
      n.get("schema").parse(io.boxline.Names::requireSchema);
    }
    return new ServerConfig.Database(
        url,
        n.text("user", ""),
        n.text("password", ""),
        schema,
        n.integer("poolSize", 16, 2, 500),
        n.bool("migrate", true));
  }

  private ServerConfig.Token token(ConfigNode n) {
    n.only("name", "secret", "role", "namespaces");
    String name = n.requiredText("name");
    String secret = n.requiredText("secret");
    requireSecret(secret, n.get("secret"));
    Role role =
        n.get("role")
            .parse(
                s -> Role.valueOf(s.toUpperCase(Locale.ROOT)),
                "admin, operator, viewer, producer or consumer");
    List<String> namespaces = new ArrayList<>();
    for (ConfigNode ns : n.get("namespaces").list()) {
      String prefix = ns.scalar();
      if (!prefix.equals("*")) {
        ns.parse(NamespacePath::of);
      }
      namespaces.add(prefix);
    }
    if (namespaces.isEmpty()) {
      throw n.get("namespaces")
          .error("a token needs at least one namespace prefix, or \"*\" for all");
    }
    return new ServerConfig.Token(name, secret, role, List.copyOf(namespaces));
  }

  private void requireSecret(String secret, ConfigNode at) {
    if (secret.length() < 16) {
      throw at.error("a token must be at least 16 characters long (it is " + secret.length() + ")");
    }
  }

  private ServerConfig.Topic topic(ConfigNode n) {
    n.only("name", "partitions", "sequencing", "retention");
    TopicName name = n.get("name").parse(TopicName::parse);
    int partitions = n.integer("partitions", 16, 1, 65_536);
    Sequencing sequencing =
        n.has("sequencing")
            ? n.get("sequencing")
                .parse(
                    s -> Sequencing.valueOf(s.toUpperCase(Locale.ROOT).replace('-', '_')),
                    "sequencer or in-transaction")
            : Sequencing.SEQUENCER;
    Optional<RetentionPolicy> retention =
        n.has("retention") ? Optional.of(retention(n.get("retention"))) : Optional.empty();
    return new ServerConfig.Topic(name, partitions, sequencing, retention);
  }

  /** A retention policy from a request body (the same keys as in the config file). */
  RetentionPolicy retention(ConfigNode n) {
    n.only("maxAge", "keepUnconsumed", "maxEventsPerPartition", "abandonAfter");
    return n.wrap(
        () ->
            new RetentionPolicy(
                n.optionalDuration("maxAge").orElse(null),
                n.bool("keepUnconsumed", true),
                n.longValue("maxEventsPerPartition", 0),
                n.duration("abandonAfter", RetentionPolicy.DEFAULT_ABANDON_AFTER)));
  }

  private ServerConfig.Subscription subscription(ConfigNode n) {
    n.only("name", "topics", "start", "groupPolicy", "retry", "retryByType", "deadLetterBlocksKey");
    String name = n.requiredText("name");
    List<TopicName> topics = new ArrayList<>();
    for (ConfigNode t : n.get("topics").list()) {
      topics.add(t.parse(TopicName::parse));
    }
    if (topics.isEmpty()) {
      throw n.get("topics").error("a subscription needs at least one topic, e.g. [acme/orders]");
    }
    StartPosition start = n.has("start") ? startPosition(n.get("start")) : StartPosition.earliest();
    Optional<GroupPolicy> policy =
        n.has("groupPolicy") ? Optional.of(groupPolicy(n.get("groupPolicy"))) : Optional.empty();
    return new ServerConfig.Subscription(name, List.copyOf(topics), start, policy, memberPolicy(n));
  }

  /** How the subscription's HTTP members are retried and dead-lettered. */
  private MemberPolicy memberPolicy(ConfigNode n) {
    MemberPolicy.Builder b = MemberPolicy.builder();
    if (n.has("retry")) {
      b.retryPolicy(retryPolicy(n.get("retry")));
    }
    ConfigNode byType = n.get("retryByType");
    byType.object();
    for (Iterator<String> it = byType.json.fieldNames(); it.hasNext(); ) {
      String type = it.next();
      ConfigNode policy = byType.get(type);
      policy.wrap(() -> b.retryPolicy(type, retryPolicy(policy))); // a blank type is named here
    }
    return b.deadLetterBlocksKey(n.bool("deadLetterBlocksKey", false)).build();
  }

  /** A retry policy for members that retry by settling (no attempts in place). */
  private RetryPolicy retryPolicy(ConfigNode n) {
    n.only("maxAttempts", "initialBackoff", "maxBackoff", "multiplier", "jitter");
    return n.wrap(
        () ->
            RetryPolicy.DEFAULT
                .inPlaceAttempts(1)
                .backoff(
                    n.duration("initialBackoff", Duration.ofSeconds(1)),
                    n.duration("maxBackoff", Duration.ofMinutes(10)))
                .multiplier(n.decimal("multiplier", 2.0))
                .jitter(n.decimal("jitter", 0.2))
                .maxAttempts(n.integer("maxAttempts", 10, 1, 1000)));
  }

  static StartPosition startPosition(ConfigNode n) {
    return n.parse(
        ConfigReader::startPosition,
        "earliest, latest or an ISO-8601 time such as 2026-01-31T12:00:00Z");
  }

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

  /** A group policy from a request body (the same keys as in the config file). */
  GroupPolicy groupPolicy(ConfigNode n) {
    n.only(
        "checkInRate",
        "minCheckInInterval",
        "deadlineMultiplier",
        "slack",
        "releaseGrace",
        "idleRelease",
        "batchSize",
        "maxCheckInInterval",
        "maxMembers");
    GroupPolicy d = GroupPolicy.DEFAULT;
    return n.wrap(
        () ->
            new GroupPolicy(
                n.decimal("checkInRate", d.checkInRate()),
                n.duration("minCheckInInterval", d.minCheckInInterval()),
                n.decimal("deadlineMultiplier", d.deadlineMultiplier()),
                n.decimal("slack", d.slack()),
                n.duration("releaseGrace", d.releaseGrace()),
                n.duration("idleRelease", d.idleRelease()),
                n.integer("batchSize", d.batchSize(), 0, 10_000),
                n.duration("maxCheckInInterval", d.maxCheckInInterval()),
                n.integer("maxMembers", d.maxMembers(), 0, 100_000)));
  }

  private ServerConfig.RelaySpec relay(ConfigNode n) {
    Set<String> keys = new HashSet<>(Set.of("name", "subscription", "batchSize", "concurrency"));
    keys.addAll(KINDS);
    n.only(keys.toArray(String[]::new));
    String name = n.requiredText("name");
    String subscription = n.requiredText("subscription");
    List<String> kinds = new ArrayList<>();
    for (String k : KINDS) {
      if (n.has(k)) {
        kinds.add(k);
      }
    }
    if (kinds.size() != 1) {
      throw n.error(
          "a relay needs exactly one sink, one of webhook, kafka, rabbitmq or nats; found "
              + (kinds.isEmpty() ? "none" : String.join(" and ", kinds)));
    }
    String kind = kinds.get(0);
    ConfigNode sink = n.get(kind);
    sink.only(SINK_KEYS.get(kind).toArray(String[]::new));
    Map<String, String> settings = new LinkedHashMap<>();
    for (String key : SINK_KEYS.get(kind)) {
      sink.optionalText(key).ifPresent(v -> settings.put(key, v));
    }
    sink.requiredText(SINK_REQUIRED.get(kind));
    if (settings.containsKey("requestTimeout")) {
      sink.duration("requestTimeout", null);
    }
    return new ServerConfig.RelaySpec(
        name,
        subscription,
        kind,
        Map.copyOf(settings),
        n.integer("batchSize", 100, 1, 10_000),
        n.integer("concurrency", 4, 1, 256));
  }
}
