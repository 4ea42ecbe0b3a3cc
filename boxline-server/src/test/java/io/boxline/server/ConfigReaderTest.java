package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Sequencing;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigReaderTest {
  private static final String TOKEN =
      "tokens:\n  - {name: ops, secret: 0123456789abcdef, role: admin, namespaces: ['*']}\n";
  private static final String DATABASE = "database: {url: 'jdbc:postgresql://db/app'}\n";

  private static ServerConfig parse(String yaml, Map<String, String> env) {
    return ServerConfig.parse(yaml, "boxline.yaml", env);
  }

  private static void refused(String yaml, String... fragments) {
    assertThatThrownBy(() -> parse(yaml, Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("boxline.yaml: ")
        .hasMessageContainingAll(fragments);
  }

  /** Refused with exactly {@code message} (the file, the key and the problem). */
  private static void refusedWith(String yaml, Map<String, String> env, String message) {
    assertThatThrownBy(() -> parse(yaml, env))
        .isInstanceOf(ConfigException.class)
        .hasMessage(message);
  }

  @Test
  void aFullConfigIsReadWithItsDefaults() {
    ServerConfig c =
        parse(
            "http: {port: 0, shutdownTimeout: 5s}\n"
                + "database: {url: 'jdbc:postgresql://db/app', user: '${DB_USER}', password: '${DB_PASSWORD:-}'}\n"
                + TOKEN
                + "topics:\n  - {name: acme/orders, partitions: 8, sequencing: in-transaction, retention: {maxAge: 7d}}\n"
                + "subscriptions:\n  - {name: audit, topics: [acme/orders], start: latest, groupPolicy: {maxMembers: 4}}\n"
                + "relays:\n  - {name: hook, subscription: audit, webhook: {url: 'http://127.0.0.1:9/x', requestTimeout: 2s}}\n",
            Map.of("DB_USER", "app"));
    assertThat(c.http().port()).isZero();
    assertThat(c.http().host()).isEqualTo("127.0.0.1");
    assertThat(c.http().shutdownTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.http().protectMetrics()).as("/metrics protected by default").isTrue();
    assertThat(
            parse(
                    "http: {protectMetrics: false}\ndatabase: {url: 'jdbc:postgresql://db/app'}\n"
                        + TOKEN,
                    Map.of())
                .http()
                .protectMetrics())
        .isFalse();
    assertThat(c.database().user()).isEqualTo("app");
    assertThat(c.database().password()).isEmpty();
    assertThat(c.database().toString()).doesNotContain("password");
    assertThat(c.database().migrate()).as("migrations on by default").isTrue();
    assertThat(
            parse("database: {url: 'jdbc:postgresql://db/app', migrate: false}\n" + TOKEN, Map.of())
                .database()
                .migrate())
        .isFalse();
    assertThat(c.topics().get(0).sequencing()).isEqualTo(Sequencing.IN_TRANSACTION);
    assertThat(c.topics().get(0).retention().get().maxAge()).isEqualTo(Duration.ofDays(7));
    assertThat(c.subscriptions().get(0).groupPolicy().get().maxMembers()).isEqualTo(4);
    assertThat(c.relays().get(0).kind()).isEqualTo("webhook");
    assertThat(c.tokens().get(0).toString()).doesNotContain("0123456789abcdef");
  }

  @Test
  void logAndHttpProtocolSettingsHaveDefaultsAndAreChecked() {
    ServerConfig d = parse(DATABASE + TOKEN, Map.of());
    assertThat(d.log()).isEqualTo(ServerConfig.Log.DEFAULT);
    assertThat(d.log().format()).isEqualTo(ServerConfig.LogFormat.TEXT);
    assertThat(d.log().access()).isTrue();
    assertThat(d.http().gzip()).as("gzip on by default").isTrue();
    assertThat(d.http().h2c()).as("h2c off by default").isFalse();
    ServerConfig c =
        parse(
            DATABASE
                + TOKEN
                + "http: {gzip: false, h2c: true}\n"
                + "log: {format: '${LOG_FORMAT:-text}', level: warning, access: false,"
                + " levels: {org.eclipse.jetty: debug, com.zaxxer.hikari: 'OFF'}}\n",
            Map.of("LOG_FORMAT", "JSON"));
    assertThat(c.log().format()).isEqualTo(ServerConfig.LogFormat.JSON);
    assertThat(c.log().level()).isEqualTo("WARN");
    assertThat(c.log().access()).isFalse();
    assertThat(c.log().levels())
        .isEqualTo(Map.of("org.eclipse.jetty", "DEBUG", "com.zaxxer.hikari", "OFF"));
    assertThat(c.http().gzip()).isFalse();
    assertThat(c.http().h2c()).isTrue();
    refused(TOKEN + "log: {format: xml}\n", "log.format", "text or json");
    refused(TOKEN + "log: {level: loud}\n", "log.level", "trace, debug, info, warn, error or off");
    refused(TOKEN + "log: {levels: {org.eclipse.jetty: loud}}\n", "log.levels", "trace, debug");
    refused(TOKEN + "log: {acess: false}\n", "log.acess", "did you mean 'access'?");
    refused(TOKEN + "http: {h2c: maybe}\n", "http.h2c");
  }

  @Test
  void readReplicasAreReadAndChecked() {
    ServerConfig c =
        parse(
            TOKEN
                + "database:\n  url: jdbc:postgresql://db/app\n  replicaWait: 250ms\n  replicas:\n"
                + "    - {url: 'jdbc:postgresql://db-r1/app', user: reader, poolSize: 4}\n"
                + "    - {url: 'jdbc:postgresql://db-r2/app'}\n",
            Map.of());
    assertThat(c.database().replicas())
        .containsExactly(
            new ServerConfig.Replica("jdbc:postgresql://db-r1/app", "reader", "", 4),
            new ServerConfig.Replica("jdbc:postgresql://db-r2/app", "", "", 16));
    assertThat(c.database().replicaWait()).isEqualTo(java.time.Duration.ofMillis(250));
    ServerConfig none = parse(DATABASE + TOKEN, Map.of());
    assertThat(none.database().replicas()).isEmpty();
    assertThat(none.database().replicaWait()).isEqualTo(java.time.Duration.ofMillis(100));
    String primary = "database:\n  url: jdbc:postgresql://db/app\n";
    refused(
        TOKEN + primary + "  replicas:\n    - {url: 'jdbc:postgresql://db/app'}\n",
        "database.replicas[0].url",
        "the primary's own url");
    refused(
        TOKEN + primary + "  replicas:\n    - {url: 'postgresql://db-r1/app'}\n",
        "database.replicas[0].url",
        "not a JDBC URL");
    refused(TOKEN + primary + "  replicas:\n    - {user: x}\n", "database.replicas[0].url");
    refused(
        TOKEN
            + primary
            + "  replicas:\n    - {url: 'jdbc:postgresql://r/a'}\n    - {url: 'jdbc:postgresql://r/a'}\n",
        "database.replicas[1]",
        "listed twice");
    refused(TOKEN + primary + "  replicaWait: 2m\n", "database.replicaWait", "between 0s and 1m");
  }

  @Test
  void anUnknownKeyIsNamedWithTheNearestAllowedOne() {
    refused(
        TOKEN + "topics:\n  - {name: acme/orders, partitons: 8}\n",
        "topics[0].partitons",
        "did you mean 'partitions'?");
  }

  @Test
  void aMissingEnvironmentVariableIsNamedWithTheFix() {
    refused(
        TOKEN + "database: {password: '${DB_PASSWORD}'}\n",
        "database.password",
        "DB_PASSWORD is not set",
        ":-default");
  }

  @Test
  void badValuesNameTheKeyAndWhatIsExpected() {
    refused(TOKEN + "http: {shutdownTimeout: soon}\n", "http.shutdownTimeout", "250ms, 30s");
    refused(TOKEN + "http: {port: 70000}\n", "http.port", "between 0 and 65535");
    // Longer than milliseconds can count: refused by name, not an overflow later.
    refused(
        TOKEN + "topics:\n  - {name: a/b, retention: {maxAge: PT2562047788015215H}}\n",
        "topics[0].retention.maxAge",
        "at most 36500d");
    refused(TOKEN + "http: {shutdownTimeout: 99999999d}\n", "http.shutdownTimeout", "at most");
    refused(TOKEN + "topics:\n  - {name: orders}\n", "topics[0].name", "namespace/topic");
    refused(
        TOKEN + "topics:\n  - {name: a/b, sequencing: eventually}\n",
        "topics[0].sequencing",
        "sequencer or in-transaction");
    refused(
        TOKEN + "subscriptions:\n  - {name: s, topics: []}\n",
        "subscriptions[0].topics",
        "at least one topic");
    refused(
        TOKEN + "subscriptions:\n  - {name: s, topics: [a/b], start: yesterday}\n",
        "subscriptions[0].start",
        "earliest, latest");
    refused(
        TOKEN + "subscriptions:\n  - {name: s, topics: [a/b], groupPolicy: {slack: 5}}\n",
        "subscriptions[0].groupPolicy");
    refused(TOKEN + "database: {url: 'postgres://x'}\n", "database.url", "not a JDBC URL");
    refused(
        TOKEN + "database: {schema: 'x; drop'}\n",
        "database.schema",
        "not a valid identifier",
        "a-z 0-9 _");
    refused(TOKEN + "http: {maxStreams: 0}\n", "http.maxStreams");
    refused("auth: {disabled: true}\n" + TOKEN, "auth.disabled", "while tokens are declared");
    refused("http: [1, 2]\n" + TOKEN, "http", "mapping");
    refused("topics: {name: x}\n" + TOKEN, "topics", "must be a list");
    refused("{{{", "not valid YAML");
  }

  @Test
  void aSubscriptionSetsItsHttpMembersRetryPolicy() {
    ServerConfig c =
        parse(
            DATABASE
                + TOKEN
                + "subscriptions:\n"
                + "  - name: billing\n"
                + "    topics: [acme/orders]\n"
                + "    retry: {maxAttempts: 4, initialBackoff: 2s, maxBackoff: 1h}\n"
                + "    retryByType: {payment.captured: {maxAttempts: 20}}\n"
                + "    deadLetterBlocksKey: true\n"
                + "  - {name: audit, topics: [acme/orders]}\n",
            Map.of());
    io.boxline.MemberPolicy billing = c.subscriptions().get(0).members();
    assertThat(billing.retryPolicy().maxAttempts()).isEqualTo(4);
    assertThat(billing.retryPolicy().inPlaceAttempts())
        .as("an HTTP member retries by settling")
        .isEqualTo(1);
    assertThat(billing.retryPolicy().delayAfter(1, new java.util.Random()))
        .isBetween(Duration.ofMillis(1600), Duration.ofMillis(2400));
    assertThat(billing.typePolicies().get("payment.captured").maxAttempts()).isEqualTo(20);
    assertThat(billing.deadLetterBlocksKey()).isTrue();
    io.boxline.MemberPolicy audit = c.subscriptions().get(1).members();
    assertThat(audit.retryPolicy().maxAttempts()).isEqualTo(10);
    assertThat(audit.typePolicies()).isEmpty();
    assertThat(audit.deadLetterBlocksKey()).isFalse();
    refused(
        TOKEN + "subscriptions:\n  - {name: s, topics: [a/b], retry: {maxAttempt: 3}}\n",
        "subscriptions[0].retry.maxAttempt",
        "did you mean 'maxAttempts'?");
    refused(
        TOKEN + "subscriptions:\n  - {name: s, topics: [a/b], retry: {maxAttempts: 0}}\n",
        "subscriptions[0].retry.maxAttempts",
        "between 1 and 1000");
    refused(
        TOKEN
            + "subscriptions:\n  - {name: s, topics: [a/b], retry: {initialBackoff: 1h, maxBackoff: 1m}}\n",
        "subscriptions[0].retry",
        "must not be shorter than initialBackoff");
    refused(
        TOKEN + "subscriptions:\n  - {name: s, topics: [a/b], retryByType: [x]}\n",
        "subscriptions[0].retryByType",
        "mapping");
    refused(
        TOKEN
            + "subscriptions:\n  - {name: s, topics: [a/b], retryByType: {' ': {maxAttempts: 2}}}\n",
        "subscriptions[0].retryByType",
        "eventType must not be blank");
  }

  @Test
  void aSubscriptionsHandlerProgramIsReadWithItsDefaultsAndChecked() throws Exception {
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("boxline-handler-config");
    ServerConfig c =
        parse(
            DATABASE
                + TOKEN
                + "subscriptions:\n"
                + "  - name: billing\n"
                + "    topics: [acme/orders]\n"
                + "    handler:\n"
                + "      exec: python3 handle.py\n"
                + "      directory: '"
                + dir
                + "'\n"
                + "      environment: {API_URL: 'http://billing', TOKEN_2: x}\n"
                + "      processes: 3\n"
                + "      replyTimeout: 10s\n"
                + "      limits: {memoryBytes: 536_870_912, cpuTime: 10m, openFiles: 256}\n"
                + "  - name: audit\n"
                + "    topics: [acme/orders]\n"
                + "    handler: {exec: ./audit.sh, perEvent: true}\n"
                + "  - {name: plain, topics: [acme/orders]}\n",
            Map.of());
    ServerConfig.HandlerSpec billing = c.subscriptions().get(0).handler().orElseThrow();
    assertThat(billing.command()).isEqualTo("python3 handle.py");
    assertThat(billing.directory()).hasValue(dir);
    assertThat(billing.environment())
        .containsExactlyInAnyOrderEntriesOf(Map.of("API_URL", "http://billing", "TOKEN_2", "x"));
    assertThat(billing.processes()).isEqualTo(3);
    assertThat(billing.perEvent()).isFalse();
    assertThat(billing.replyTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(billing.restartBackoff()).isEqualTo(Duration.ofSeconds(1));
    assertThat(billing.maxRestartBackoff()).isEqualTo(Duration.ofMinutes(1));
    assertThat(billing.stopTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(billing.limits())
        .isEqualTo(new io.boxline.exec.ProgramLimits(536_870_912L, Duration.ofMinutes(10), 256));
    ServerConfig.HandlerSpec audit = c.subscriptions().get(1).handler().orElseThrow();
    assertThat(audit.perEvent()).isTrue();
    assertThat(audit.processes()).isEqualTo(1);
    assertThat(audit.directory()).isEmpty();
    assertThat(audit.limits()).isEqualTo(io.boxline.exec.ProgramLimits.NONE);
    assertThat(c.subscriptions().get(2).handler()).isEmpty();

    String sub = TOKEN + "subscriptions:\n  - name: s\n    topics: [a/b]\n    handler: ";
    refused(sub + "{processes: 2}\n", "subscriptions[0].handler.exec", "is required");
    refused(
        sub + "{exec: x, processes: 0}\n",
        "subscriptions[0].handler.processes",
        "between 1 and 64");
    refused(sub + "{exec: x, command: y}\n", "subscriptions[0].handler.command");
    refused(
        sub + "{exec: x, directory: /no/such/dir}\n",
        "subscriptions[0].handler.directory",
        "is not a directory");
    refused(
        sub + "{exec: x, environment: {'1X': y}}\n",
        "subscriptions[0].handler.environment.1X",
        "is not a variable name");
    refused(
        sub + "{exec: x, restartBackoff: 1m, maxRestartBackoff: 1s}\n",
        "subscriptions[0].handler.maxRestartBackoff",
        "shorter than restartBackoff");
    refused(
        sub + "{exec: x, replyTimeout: 0s}\n",
        "subscriptions[0].handler.replyTimeout",
        "longer than zero");
    refused(
        sub + "{exec: x, limits: {memoryBytes: 100}}\n",
        "subscriptions[0].handler.limits",
        "at least 1 MiB");
    refused(
        sub + "{exec: x, limits: {memory: 100}}\n",
        "subscriptions[0].handler.limits.memory",
        "unknown key. Allowed here: cpuTime, memoryBytes, openFiles");
  }

  @Test
  void aMisspeltKeyAtDepthIsNamedWithItsPathAndTheNearestAllowedOne() {
    String subscription = DATABASE + TOKEN + "subscriptions:\n  - name: s\n    topics: [a/b]\n";
    refusedWith(
        subscription + "    retry: {maxAtempts: 3}\n",
        Map.of(),
        "boxline.yaml: subscriptions[0].retry.maxAtempts: unknown key; did you mean"
            + " 'maxAttempts'? Allowed here: initialBackoff, jitter, maxAttempts, maxBackoff,"
            + " multiplier");
    refusedWith(
        subscription + "    retryByType: {payment.captured: {jiter: 0.1}}\n",
        Map.of(),
        "boxline.yaml: subscriptions[0].retryByType.payment.captured.jiter: unknown key; did you"
            + " mean 'jitter'? Allowed here: initialBackoff, jitter, maxAttempts, maxBackoff,"
            + " multiplier");
    refusedWith(
        DATABASE + TOKEN + "relays:\n  - {name: r, subscription: s, webhook: {url: x, secrt: y}}\n",
        Map.of(),
        "boxline.yaml: relays[0].webhook.secrt: unknown key; did you mean 'secret'? Allowed here:"
            + " requestTimeout, secret, standardWebhooksSecret, url");
  }

  @Test
  void scalarsAreReadFromTheirTextSoQuotedAndExpandedValuesWork() {
    ServerConfig quoted =
        parse(
            DATABASE
                + TOKEN
                + "http: {port: '8081', maxConnections: \"1_000\", gzip: 'false'}\n"
                + "topics:\n  - {name: a/b, partitions: '4'}\n",
            Map.of());
    assertThat(quoted.http().port()).isEqualTo(8081);
    assertThat(quoted.http().maxConnections()).isEqualTo(1000);
    assertThat(quoted.http().gzip()).isFalse();
    assertThat(quoted.topics().get(0).partitions()).isEqualTo(4);
    assertThat(parse(DATABASE + TOKEN + "http: {maxConnections: 2_000}\n", Map.of()).http())
        .extracting(ServerConfig.Http::maxConnections)
        .isEqualTo(2000);
    String expanded =
        DATABASE
            + TOKEN
            + "http:\n  port: ${PORT}\n  h2c: ${H2C:-true}\n"
            + "subscriptions:\n  - name: s\n    topics: [a/b]\n"
            + "    retry: {maxAttempts: '${ATTEMPTS}'}\n";
    ServerConfig fromEnv = parse(expanded, Map.of("PORT", "9091", "ATTEMPTS", "7"));
    assertThat(fromEnv.http().port()).isEqualTo(9091);
    assertThat(fromEnv.http().h2c()).isTrue();
    assertThat(fromEnv.subscriptions().get(0).members().retryPolicy().maxAttempts()).isEqualTo(7);
    refusedWith(
        expanded,
        Map.of("PORT", "ninety", "ATTEMPTS", "7"),
        "boxline.yaml: http.port: must be a whole number, got 'ninety'");
    refusedWith(
        expanded,
        Map.of("PORT", "70000", "ATTEMPTS", "7"),
        "boxline.yaml: http.port: must be between 0 and 65535, got 70000");
    refusedWith(
        expanded,
        Map.of("PORT", "9091"),
        "boxline.yaml: subscriptions[0].retry.maxAttempts: the environment variable ATTEMPTS is"
            + " not set; set it, or write ${ATTEMPTS:-default} to give a default");
    refusedWith(
        DATABASE + TOKEN + "http: {gzip: 'yes'}\n",
        Map.of(),
        "boxline.yaml: http.gzip: must be true or false, got 'yes'");
  }

  @Test
  void aListIsNoValueOrMappingAndAValueIsNoList() {
    refusedWith(
        DATABASE + TOKEN + "subscriptions:\n  - {name: s, topics: [a/b], retry: [3]}\n",
        Map.of(),
        "boxline.yaml: subscriptions[0].retry: must be a mapping of keys to values");
    refusedWith(
        DATABASE + TOKEN + "log: [json]\n",
        Map.of(),
        "boxline.yaml: log: must be a mapping of keys to values");
    refusedWith(
        DATABASE + TOKEN + "http:\n",
        Map.of(),
        "boxline.yaml: http: must be a mapping of keys to values");
    refusedWith(
        DATABASE + TOKEN + "http: {host: [a, b]}\n",
        Map.of(),
        "boxline.yaml: http.host: must be a single value, not a list");
    refusedWith(
        DATABASE + TOKEN + "http: {port: {n: 1}}\n",
        Map.of(),
        "boxline.yaml: http.port: must be a single value, not a mapping");
    refusedWith(
        DATABASE
            + "tokens:\n  - {name: a, secret: 0123456789abcdef, role: admin, namespaces: '*'}\n",
        Map.of(),
        "boxline.yaml: tokens[0].namespaces: must be a list (write each item on a line starting"
            + " with '- ')");
    refusedWith(
        DATABASE + TOKEN + "namespaces: [acme, [billing]]\n",
        Map.of(),
        "boxline.yaml: namespaces[1]: must be a single value, not a list");
  }

  @Test
  void aWrongTypedRetryByTypeEntryIsNamedWithItsType() {
    String subscription = DATABASE + TOKEN + "subscriptions:\n  - name: s\n    topics: [a/b]\n";
    refusedWith(
        subscription + "    retryByType: {payment.captured: 5}\n",
        Map.of(),
        "boxline.yaml: subscriptions[0].retryByType.payment.captured: must be a mapping of keys to"
            + " values");
    refusedWith(
        subscription + "    retryByType: {payment.captured: {maxAttempts: many}}\n",
        Map.of(),
        "boxline.yaml: subscriptions[0].retryByType.payment.captured.maxAttempts: must be a whole"
            + " number, got 'many'");
    refusedWith(
        subscription + "    retryByType: {payment.captured: {initialBackoff: [1s]}}\n",
        Map.of(),
        "boxline.yaml: subscriptions[0].retryByType.payment.captured.initialBackoff: must be a"
            + " single value, not a list");
    refusedWith(
        subscription + "    retryByType: {payment.captured: {maxBackoff: soon}}\n",
        Map.of(),
        "boxline.yaml: subscriptions[0].retryByType.payment.captured.maxBackoff: 'soon' is not a"
            + " duration: write a whole number with ms, s, m, h or d (250ms, 30s, 5m, 2h, 7d) or"
            + " ISO-8601 (PT0.25S)");
  }

  @Test
  void relaysNeedExactlyOneSinkWithItsRequiredSetting() {
    refused(
        TOKEN + "relays:\n  - {name: r, subscription: s}\n",
        "relays[0]",
        "exactly one sink",
        "found none");
    refused(
        TOKEN
            + "relays:\n  - {name: r, subscription: s, kafka: {bootstrapServers: x}, nats: {servers: y}}\n",
        "relays[0]",
        "kafka and nats");
    refused(
        TOKEN + "relays:\n  - {name: r, subscription: s, kafka: {topic: t}}\n",
        "relays[0].kafka.bootstrapServers",
        "is required");
    refused(
        TOKEN + "relays:\n  - {name: r, subscription: s, nats: {servers: x, subjct: y}}\n",
        "relays[0].nats.subjct",
        "'subject'");
  }

  @Test
  void tokensMustBeLongScopedAndPresent() {
    refused(
        "namespaces: [acme]\n",
        "tokens",
        "no token is declared",
        "BOXLINE_ADMIN_TOKEN",
        "auth.disabled");
    refused(
        "tokens:\n  - {name: a, secret: short, role: admin, namespaces: ['*']}\n",
        "tokens[0].secret",
        "at least 16 characters");
    refused(
        "tokens:\n  - {name: a, secret: 0123456789abcdef, role: root, namespaces: ['*']}\n",
        "tokens[0].role",
        "admin, operator, viewer, producer or consumer");
    refused(
        "tokens:\n  - {name: a, secret: 0123456789abcdef, role: admin}\n",
        "tokens[0].namespaces",
        "at least one namespace");
    refused(
        TOKEN + "  - {name: ops, secret: 0123456789abcdeg, role: admin, namespaces: ['*']}\n",
        "tokens[1].name",
        "used twice");
    ServerConfig fromEnv = parse(DATABASE, Map.of("BOXLINE_ADMIN_TOKEN", "from-the-environment-1"));
    assertThat(fromEnv.tokens()).hasSize(1);
    assertThat(fromEnv.tokens().get(0).role()).isEqualTo(ServerConfig.Role.ADMIN);
    assertThat(parse(DATABASE + "auth: {disabled: true}\n", Map.of()).tokens()).isEmpty();
  }

  @Test
  void aConfigMustNameItsDatabaseUnlessDev() {
    refused(
        TOKEN + "topics:\n  - {name: acme/orders}\n",
        "boxline.yaml: database.url: is required",
        "Set database.url to its JDBC URL",
        "run with --dev to try the server out on a throwaway embedded PostgreSQL");
    refused("database: {url: ''}\n" + TOKEN, "database.url: is required", "--dev");
    refused("database: {url: '${DB_URL:-}', user: app}\n" + TOKEN, "database.url: is required");
    // What else is wrong comes first.
    refused(TOKEN + "http: {port: 70000}\n", "http.port", "between 0 and 65535");
    // --dev: no database, a throwaway embedded PostgreSQL; a database named with it is refused.
    ServerConfig dev =
        io.boxline.server.internal.ConfigReader.parse(TOKEN, "boxline.yaml", Map.of(), true);
    assertThat(dev.database().url()).isEmpty();
    assertThat(dev.database().toString()).contains("--dev");
    assertThatThrownBy(
            () ->
                io.boxline.server.internal.ConfigReader.parse(
                    DATABASE + TOKEN, "boxline.yaml", Map.of(), true))
        .isInstanceOf(ConfigException.class)
        .hasMessageContainingAll(
            "boxline.yaml: database.url: is set, but --dev runs on a throwaway embedded PostgreSQL",
            "run without --dev to use this database");
    ServerConfig fromEnv =
        io.boxline.server.internal.ConfigReader.dev(
            Map.of("BOXLINE_ADMIN_TOKEN", "from-the-environment-1"));
    assertThat(fromEnv.source()).isEqualTo("--dev");
    assertThat(fromEnv.database().url()).isEmpty();
    assertThat(fromEnv.tokens()).hasSize(1);
  }
}
