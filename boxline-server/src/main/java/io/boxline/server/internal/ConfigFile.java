package io.boxline.server.internal;

import io.boxline.BoxlineException;
import io.boxline.MemberPolicy;
import io.boxline.Names;
import io.boxline.NamespacePath;
import io.boxline.RetentionPolicy;
import io.boxline.RetryPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.TopicName;
import io.boxline.server.ConfigException;
import io.boxline.server.ServerConfig;
import io.boxline.server.ServerConfig.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The config file as written, one record per mapping (bound by {@link ConfigBinding}; a key left
 * out or null is null, except that a mapping marked {@link ConfigBinding.Mapping} and every map
 * must not be written null), and the one place that checks it: {@link #resolve} turns it into a
 * {@link ServerConfig}, each record its own part, with the defaults, ranges and cross-checks, every
 * refusal naming the key.
 */
record ConfigFile(
    Http http,
    Database database,
    Auth auth,
    List<Token> tokens,
    List<String> namespaces,
    List<Topic> topics,
    List<Subscription> subscriptions,
    List<Relay> relays,
    GroupPolicy groupPolicy,
    Log log,
    KafkaProtocol kafka) {

  /** A mapping of the file that becomes a part of the {@link ServerConfig}. */
  interface Section<T> {
    /** This mapping, found at {@code at}, checked and with its defaults. */
    T resolve(At at);
  }

  /**
   * The config; with {@code dev} (the {@code --dev} flag) it must not name a database. {@code env}
   * may hold {@link ConfigReader#ADMIN_TOKEN_VARIABLE}.
   */
  ServerConfig resolve(String source, Map<String, String> env, boolean dev) {
    At root = new At(source, "");
    ServerConfig.Http http = orNone(this.http, Http.class).resolve(root.key("http"));
    ServerConfig.Log log = orNone(this.log, Log.class).resolve(root.key("log"));
    ServerConfig.Database db = orNone(database, Database.class).resolve(root.key("database"));
    boolean authDisabled = auth != null && or(auth.disabled(), false);
    List<ServerConfig.Token> tokens =
        new ArrayList<>(
            each(
                this.tokens,
                root.key("tokens"),
                ServerConfig.Token::name,
                n -> "token name '" + n + "' is used twice; names must differ"));
    String adminToken = env.get(ConfigReader.ADMIN_TOKEN_VARIABLE);
    if (adminToken != null && !adminToken.isEmpty()) {
      requireSecret(adminToken, new At(source, "$" + ConfigReader.ADMIN_TOKEN_VARIABLE));
      tokens.add(
          new ServerConfig.Token(
              "$" + ConfigReader.ADMIN_TOKEN_VARIABLE, adminToken, Role.ADMIN, List.of("*")));
    }
    if (authDisabled && !tokens.isEmpty()) {
      throw root.key("auth")
          .key("disabled")
          .error(
              "is true while tokens are declared (or "
                  + ConfigReader.ADMIN_TOKEN_VARIABLE
                  + " is set); remove one or the other");
    }
    if (tokens.isEmpty() && !authDisabled) {
      throw root.key("tokens")
          .error(
              "no token is declared, so nobody could call the API; declare tokens (see"
                  + " docs/guide/server.md), set the environment variable "
                  + ConfigReader.ADMIN_TOKEN_VARIABLE
                  + ", or set auth.disabled: true on a machine nobody else can reach");
    }
    List<NamespacePath> namespaces = new ArrayList<>();
    for (int i = 0; i < size(this.namespaces); i++) {
      namespaces.add(
          root.key("namespaces").index(i).parse(this.namespaces.get(i), NamespacePath::of));
    }
    List<ServerConfig.Topic> topics =
        each(
            this.topics,
            root.key("topics"),
            ServerConfig.Topic::name,
            n -> "topic " + n + " is declared twice");
    List<ServerConfig.Subscription> subscriptions =
        each(
            this.subscriptions,
            root.key("subscriptions"),
            ServerConfig.Subscription::name,
            n -> "subscription '" + n + "' is declared twice");
    List<ServerConfig.RelaySpec> relays =
        each(
            this.relays,
            root.key("relays"),
            ServerConfig.RelaySpec::name,
            n -> "relay '" + n + "' is declared twice");
    Optional<io.boxline.GroupPolicy> policy =
        groupPolicy == null
            ? Optional.empty()
            : Optional.of(groupPolicy.resolve(root.key("groupPolicy")));
    Optional<ServerConfig.Kafka> kafka =
        this.kafka == null
            ? Optional.empty()
            : Optional.of(this.kafka.resolve(root.key("kafka"), http));
    // Checked last, so that what else is wrong with a file comes first.
    if (db.url().isEmpty() && !dev) {
      throw root.key("database").key("url").error(ConfigReader.NO_DATABASE);
    }
    if (db.url().isPresent() && dev) {
      throw root.key("database")
          .key("url")
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
        log,
        kafka);
  }

  @ConfigBinding.Mapping
  record KafkaProtocol(
      String host,
      Long port,
      String advertisedHost,
      Long maxRequestBytes,
      Boolean tls,
      Duration sessionTimeoutMax,
      Duration nodeTimeout) {
    ServerConfig.Kafka resolve(At at, ServerConfig.Http http) {
      if (port == null) {
        throw at.key("port").error("is required to turn the Kafka listener on (e.g. 9092)");
      }
      String bind = text(host).orElse(http.host());
      String advertised =
          text(advertisedHost)
              .orElse(bind.equals("0.0.0.0") || bind.equals("::") ? "127.0.0.1" : bind);
      boolean secure = or(tls, false);
      if (secure && http.keystore().isEmpty()) {
        throw at.key("tls")
            .error("is true, but http.keystore is not set; TLS uses the HTTP listener's keystore");
      }
      Duration sessionMax = or(sessionTimeoutMax, Duration.ofMinutes(5));
      if (sessionMax.compareTo(Duration.ofSeconds(6)) < 0) {
        throw at.key("sessionTimeoutMax")
            .error("must be at least 6s, got " + Names.durationText(sessionMax));
      }
      Duration nodes = or(nodeTimeout, Duration.ofSeconds(10));
      if (nodes.compareTo(Duration.ofSeconds(1)) < 0
          || nodes.compareTo(Duration.ofMinutes(5)) > 0) {
        throw at.key("nodeTimeout")
            .error("must be between 1s and 5m, got " + Names.durationText(nodes));
      }
      return new ServerConfig.Kafka(
          bind,
          at.between("port", port, 9092, 0, 65_535),
          advertised,
          at.between("maxRequestBytes", maxRequestBytes, 16 * 1024 * 1024, 1024, 256 * 1024 * 1024),
          secure,
          sessionMax,
          nodes);
    }
  }

  @ConfigBinding.Mapping
  record Http(
      String host,
      Long port,
      Long maxBodyBytes,
      Long threads,
      Long maxStreams,
      Duration shutdownTimeout,
      Boolean protectMetrics,
      Boolean console,
      String keystore,
      String keystorePassword,
      Duration idleTimeout,
      Duration bodyTimeout,
      Long maxConnections,
      Boolean gzip,
      Boolean h2c)
      implements Section<ServerConfig.Http> {
    @Override
    public ServerConfig.Http resolve(At at) {
      Optional<Path> keystore = text(this.keystore).map(Path::of);
      if (keystore.isPresent() && !Files.isReadable(keystore.get())) {
        throw at.key("keystore")
            .error("cannot read " + keystore.get() + "; give the path of a PKCS#12 file");
      }
      ServerConfig.Http http =
          new ServerConfig.Http(
              text(host).orElse("127.0.0.1"),
              at.between("port", port, 8080, 0, 65_535),
              at.between("maxBodyBytes", maxBodyBytes, 4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
              at.between("threads", threads, 32, 4, 1024),
              // A waiting tail holds no thread, only its connection and a few hundred bytes.
              at.between("maxStreams", maxStreams, 1000, 1, 100_000),
              or(shutdownTimeout, Duration.ofSeconds(20)),
              or(protectMetrics, true),
              or(console, true),
              keystore,
              text(keystorePassword).orElse(""),
              or(idleTimeout, Duration.ofSeconds(60)),
              or(bodyTimeout, Duration.ofSeconds(30)),
              at.between("maxConnections", maxConnections, 2048, 16, 1_000_000),
              or(gzip, true),
              or(h2c, false));
      if (http.h2c() && keystore.isPresent()) {
        throw at.key("h2c")
            .error(
                "is HTTP/2 over cleartext, but a keystore is set (TLS); remove one of them (HTTP/2"
                    + " over TLS is not offered yet)");
      }
      return http;
    }
  }

  @ConfigBinding.Mapping
  record Log(String format, String level, Map<String, String> levels, Boolean access)
      implements Section<ServerConfig.Log> {
    private static final List<String> LEVELS =
        List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");

    @Override
    public ServerConfig.Log resolve(At at) {
      ServerConfig.LogFormat format =
          this.format == null
              ? ServerConfig.LogFormat.TEXT
              : at.key("format")
                  .parse(
                      this.format,
                      s -> ServerConfig.LogFormat.valueOf(s.toUpperCase(Locale.ROOT)),
                      "text or json");
      Map<String, String> byLogger = new LinkedHashMap<>();
      if (levels != null) {
        levels.forEach((logger, l) -> byLogger.put(logger, level(at.key("levels").key(logger), l)));
      }
      return new ServerConfig.Log(
          format,
          level == null ? "INFO" : level(at.key("level"), level),
          Map.copyOf(byLogger),
          or(access, true));
    }

    private static String level(At at, String level) {
      return at.parse(
          level,
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
  }

  @ConfigBinding.Mapping
  record Database(
      String url,
      String user,
      String password,
      String schema,
      Long poolSize,
      Boolean migrate,
      List<Replica> replicas,
      Duration replicaWait)
      implements Section<ServerConfig.Database> {
    @Override
    public ServerConfig.Database resolve(At at) {
      Optional<String> url = text(this.url);
      if (url.isPresent() && !url.get().startsWith("jdbc:")) {
        throw at.key("url")
            .error(
                "'"
                    + url.get()
                    + "' is not a JDBC URL; write e.g. jdbc:postgresql://127.0.0.1:5432/app");
      }
      if (schema != null) {
        at.key("schema").parse(schema, Names::requireSchema);
      }
      List<ServerConfig.Replica> read =
          each(
              replicas,
              at.key("replicas"),
              ServerConfig.Replica::url,
              u -> "replica '" + u + "' is listed twice");
      if (url.isEmpty() && !read.isEmpty()) {
        throw at.key("replicas").error("needs database.url: replicas are copies of that primary");
      }
      for (int i = 0; i < read.size(); i++) {
        if (url.isPresent() && read.get(i).url().equals(url.get())) {
          throw at.key("replicas")
              .index(i)
              .key("url")
              .error("is the primary's own url; list the urls of its streaming replicas (or none)");
        }
      }
      Duration wait = or(replicaWait, Duration.ofMillis(100));
      if (wait.isNegative() || wait.compareTo(Duration.ofMinutes(1)) > 0) {
        throw at.key("replicaWait")
            .error("must be between 0s and 1m, got " + Names.durationText(wait));
      }
      return new ServerConfig.Database(
          url,
          text(user).orElse(""),
          text(password).orElse(""),
          text(schema).orElse("boxline"),
          at.between("poolSize", poolSize, 16, 2, 500),
          or(migrate, true),
          read,
          wait);
    }
  }

  @ConfigBinding.Mapping
  record Replica(String url, String user, String password, Long poolSize)
      implements Section<ServerConfig.Replica> {
    @Override
    public ServerConfig.Replica resolve(At at) {
      String u = at.required("url", this.url);
      if (!u.startsWith("jdbc:")) {
        throw at.key("url")
            .error(
                "'" + u + "' is not a JDBC URL; write e.g. jdbc:postgresql://replica-1:5432/app");
      }
      return new ServerConfig.Replica(
          u,
          text(user).orElse(""),
          text(password).orElse(""),
          at.between("poolSize", poolSize, 16, 2, 500));
    }
  }

  @ConfigBinding.Mapping
  record Auth(Boolean disabled) {}

  record Token(String name, String secret, String role, List<String> namespaces)
      implements Section<ServerConfig.Token> {
    @Override
    public ServerConfig.Token resolve(At at) {
      String name = at.required("name", this.name);
      String secret = at.required("secret", this.secret);
      requireSecret(secret, at.key("secret"));
      Role role =
          at.key("role")
              .parse(
                  this.role,
                  s -> Role.valueOf(s.toUpperCase(Locale.ROOT)),
                  "admin, operator, viewer, producer or consumer");
      List<String> prefixes = new ArrayList<>();
      for (int i = 0; i < size(namespaces); i++) {
        At prefix = at.key("namespaces").index(i);
        if (namespaces.get(i) == null) {
          throw prefix.error("is required");
        }
        if (!namespaces.get(i).equals("*")) {
          prefix.parse(namespaces.get(i), NamespacePath::of);
        }
        prefixes.add(namespaces.get(i));
      }
      if (prefixes.isEmpty()) {
        throw at.key("namespaces")
            .error("a token needs at least one namespace prefix, or \"*\" for all");
      }
      return new ServerConfig.Token(name, secret, role, List.copyOf(prefixes));
    }
  }

  record Topic(String name, Long partitions, String sequencing, Retention retention)
      implements Section<ServerConfig.Topic> {
    @Override
    public ServerConfig.Topic resolve(At at) {
      return new ServerConfig.Topic(
          at.key("name").parse(name, TopicName::parse),
          at.between("partitions", partitions, 16, 1, 65_536),
          sequencing == null
              ? Sequencing.SEQUENCER
              : at.key("sequencing")
                  .parse(
                      sequencing,
                      s -> Sequencing.valueOf(s.toUpperCase(Locale.ROOT).replace('-', '_')),
                      "sequencer or in-transaction"),
          retention == null
              ? Optional.empty()
              : Optional.of(retention.resolve(at.key("retention"))));
    }
  }

  record Retention(
      Duration maxAge, Boolean keepUnconsumed, Long maxEventsPerPartition, Duration abandonAfter)
      implements Section<RetentionPolicy> {
    @Override
    public RetentionPolicy resolve(At at) {
      return at.valid(
          () ->
              new RetentionPolicy(
                  maxAge,
                  or(keepUnconsumed, true),
                  or(maxEventsPerPartition, 0L),
                  or(abandonAfter, RetentionPolicy.DEFAULT_ABANDON_AFTER)));
    }
  }

  record Subscription(
      String name,
      List<String> topics,
      String start,
      GroupPolicy groupPolicy,
      Retry retry,
      Map<String, Retry> retryByType,
      Boolean deadLetterBlocksKey,
      ConfigHandler handler)
      implements Section<ServerConfig.Subscription> {
    @Override
    public ServerConfig.Subscription resolve(At at) {
      String name = at.required("name", this.name);
      List<TopicName> names = new ArrayList<>();
      for (int i = 0; i < size(topics); i++) {
        names.add(at.key("topics").index(i).parse(topics.get(i), TopicName::parse));
      }
      if (names.isEmpty()) {
        throw at.key("topics").error("a subscription needs at least one topic, e.g. [acme/orders]");
      }
      StartPosition start =
          this.start == null
              ? StartPosition.earliest()
              : at.key("start")
                  .parse(
                      this.start,
                      ConfigReader::startPosition,
                      "earliest, latest or an ISO-8601 time such as 2026-01-31T12:00:00Z");
      Optional<io.boxline.GroupPolicy> policy =
          groupPolicy == null
              ? Optional.empty()
              : Optional.of(groupPolicy.resolve(at.key("groupPolicy")));
      return new ServerConfig.Subscription(
          name,
          List.copyOf(names),
          start,
          policy,
          members(at),
          handler == null ? Optional.empty() : Optional.of(handler.resolve(at.key("handler"))));
    }

    /** How the subscription's HTTP members are retried and dead-lettered. */
    private MemberPolicy members(At at) {
      MemberPolicy.Builder b = MemberPolicy.builder();
      if (retry != null) {
        b.retryPolicy(retry.resolve(at.key("retry")));
      }
      if (retryByType != null) {
        retryByType.forEach(
            (type, policy) -> {
              At p = at.key("retryByType").key(type);
              if (policy == null) {
                throw p.error(ConfigBinding.MAPPING);
              }
              p.valid(() -> b.retryPolicy(type, policy.resolve(p))); // a blank type is named here
            });
      }
      return b.deadLetterBlocksKey(or(deadLetterBlocksKey, false)).build();
    }
  }

  /** A retry policy for members that retry by settling (no attempts in place). */
  record Retry(
      Long maxAttempts,
      Duration initialBackoff,
      Duration maxBackoff,
      Double multiplier,
      Double jitter)
      implements Section<RetryPolicy> {
    @Override
    public RetryPolicy resolve(At at) {
      return at.valid(
          () ->
              RetryPolicy.DEFAULT
                  .inPlaceAttempts(1)
                  .backoff(
                      or(initialBackoff, Duration.ofSeconds(1)),
                      or(maxBackoff, Duration.ofMinutes(10)))
                  .multiplier(or(multiplier, 2.0))
                  .jitter(or(jitter, 0.2))
                  .maxAttempts(at.between("maxAttempts", maxAttempts, 10, 1, 1000)));
    }
  }

  /** A group policy (the cluster default, or a subscription's). */
  record GroupPolicy(
      Double checkInRate,
      Duration minCheckInInterval,
      Double deadlineMultiplier,
      Double slack,
      Duration releaseGrace,
      Duration idleRelease,
      Long batchSize,
      Duration maxCheckInInterval,
      Long maxMembers)
      implements Section<io.boxline.GroupPolicy> {
    @Override
    public io.boxline.GroupPolicy resolve(At at) {
      io.boxline.GroupPolicy d = io.boxline.GroupPolicy.DEFAULT;
      return at.valid(
          () ->
              new io.boxline.GroupPolicy(
                  or(checkInRate, d.checkInRate()),
                  or(minCheckInInterval, d.minCheckInInterval()),
                  or(deadlineMultiplier, d.deadlineMultiplier()),
                  or(slack, d.slack()),
                  or(releaseGrace, d.releaseGrace()),
                  or(idleRelease, d.idleRelease()),
                  at.between("batchSize", batchSize, d.batchSize(), 0, 10_000),
                  or(maxCheckInInterval, d.maxCheckInInterval()),
                  at.between("maxMembers", maxMembers, d.maxMembers(), 0, 100_000)));
    }
  }

  /** A relay: exactly one of its sinks is set. */
  record Relay(
      String name,
      String subscription,
      Long batchSize,
      Long concurrency,
      Webhook webhook,
      Kafka kafka,
      RabbitMq rabbitmq,
      Nats nats)
      implements Section<ServerConfig.RelaySpec> {
    @Override
    public ServerConfig.RelaySpec resolve(At at) {
      String name = at.required("name", this.name);
      String subscription = at.required("subscription", this.subscription);
      Map<String, Sink> sinks = new LinkedHashMap<>();
      sinks.put("webhook", webhook);
      sinks.put("kafka", kafka);
      sinks.put("rabbitmq", rabbitmq);
      sinks.put("nats", nats);
      sinks.values().removeIf(s -> s == null);
      if (sinks.size() != 1) {
        throw at.error(
            "a relay needs exactly one sink, one of webhook, kafka, rabbitmq or nats; found "
                + (sinks.isEmpty() ? "none" : String.join(" and ", sinks.keySet())));
      }
      String kind = sinks.keySet().iterator().next();
      return new ServerConfig.RelaySpec(
          name,
          subscription,
          kind,
          sinks.get(kind).settings(at.key(kind)),
          at.between("batchSize", batchSize, 100, 1, 10_000),
          at.between("concurrency", concurrency, 4, 1, 256));
    }
  }

  /** A relay's sink: its settings as {@link Relays} reads them (a value left empty is absent). */
  interface Sink {
    Map<String, String> settings(At at);
  }

  /** {@code requestTimeout} is kept as written; {@link Relays} reads it as a duration. */
  record Webhook(String url, String secret, String standardWebhooksSecret, String requestTimeout)
      implements Sink {
    @Override
    public Map<String, String> settings(At at) {
      at.required("url", url);
      text(requestTimeout).ifPresent(t -> at.key("requestTimeout").parse(t, Names::duration));
      return present(
          "url",
          url,
          "secret",
          secret,
          "standardWebhooksSecret",
          standardWebhooksSecret,
          "requestTimeout",
          requestTimeout);
    }
  }

  record Kafka(String bootstrapServers, String topic) implements Sink {
    @Override
    public Map<String, String> settings(At at) {
      at.required("bootstrapServers", bootstrapServers);
      return present("bootstrapServers", bootstrapServers, "topic", topic);
    }
  }

  record RabbitMq(String uri, String exchange, String routingKey) implements Sink {
    @Override
    public Map<String, String> settings(At at) {
      at.required("uri", uri);
      return present("uri", uri, "exchange", exchange, "routingKey", routingKey);
    }
  }

  record Nats(String servers, String subject, String stream) implements Sink {
    @Override
    public Map<String, String> settings(At at) {
      at.required("servers", servers);
      return present("servers", servers, "subject", subject, "stream", stream);
    }
  }

  /** Keys and values, alternating; a value null or empty is left out. */
  private static Map<String, String> present(String... keysAndValues) {
    Map<String, String> settings = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      String key = keysAndValues[i];
      text(keysAndValues[i + 1]).ifPresent(v -> settings.put(key, v));
    }
    return Map.copyOf(settings);
  }

  /**
   * Where a value is in the file, for its refusal: the file (or "--dev") and the key path, e.g.
   * {@code subscriptions[0].retry.maxAttempts}.
   */
  record At(String source, String path) {
    At key(String key) {
      return new At(source, path.isEmpty() ? key : path + "." + key);
    }

    At index(int i) {
      return new At(source, path + "[" + i + "]");
    }

    ConfigException error(String problem) {
      return new ConfigException(source, path, problem);
    }

    /** {@code value} of {@code key}, {@code dflt} when absent, refused outside min..max. */
    int between(String key, Long value, int dflt, int min, int max) {
      if (value == null) {
        return dflt;
      }
      if (value < min || value > max) {
        throw key(key).error("must be between " + min + " and " + max + ", got " + value);
      }
      return value.intValue();
    }

    /** {@code value} of {@code key}, which must be there and not blank. */
    String required(String key, String value) {
      if (value == null) {
        throw key(key).error("is required");
      }
      if (value.isBlank()) {
        throw key(key).error("must not be empty");
      }
      return value;
    }

    /** The value here, which must be there, parsed; a refusal names the fix. */
    <T> T parse(String value, Function<String, T> parser) {
      return parse(value, parser, null);
    }

    /** {@link #parse(String, Function)}, a refusal without words of its own naming what fits. */
    <T> T parse(String value, Function<String, T> parser, String expected) {
      if (value == null) {
        throw error("is required");
      }
      try {
        return parser.apply(value);
      } catch (BoxlineException e) {
        throw error(e.getMessage());
      } catch (RuntimeException e) {
        throw error(
            "'" + value + "' is not valid" + (expected == null ? "" : "; expected " + expected));
      }
    }

    /** What {@code build} makes, its refusal (a policy's own check) named here. */
    <T> T valid(Supplier<T> build) {
      try {
        return build.get();
      } catch (ConfigException e) {
        throw e;
      } catch (BoxlineException | IllegalArgumentException e) {
        throw error(e.getMessage());
      }
    }
  }

  private static void requireSecret(String secret, At at) {
    if (secret.length() < 16) {
      throw at.error("a token must be at least 16 characters long (it is " + secret.length() + ")");
    }
  }

  /**
   * Each item of a list, checked, refused when it is not a mapping or when its name repeats one
   * before it.
   */
  private static <T> List<T> each(
      List<? extends Section<T>> items,
      At list,
      Function<T, Object> name,
      Function<Object, String> twice) {
    List<T> resolved = new ArrayList<>();
    Set<Object> names = new HashSet<>();
    for (int i = 0; i < size(items); i++) {
      At at = list.index(i);
      if (items.get(i) == null) {
        throw at.error(ConfigBinding.MAPPING);
      }
      T item = items.get(i).resolve(at);
      Object n = name.apply(item);
      if (!names.add(n)) {
        throw at.key("name").error(twice.apply(n));
      }
      resolved.add(item);
    }
    return resolved;
  }

  private static int size(List<?> list) {
    return list == null ? 0 : list.size();
  }

  private static <T> T or(T value, T dflt) {
    return value == null ? dflt : value;
  }

  private static <T> T orNone(T section, Class<T> type) {
    return section == null ? ConfigBinding.none(type) : section;
  }

  /** A text value; empty counts as absent (as {@code ${VAR:-}} gives). */
  private static Optional<String> text(String value) {
    return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
  }
}
