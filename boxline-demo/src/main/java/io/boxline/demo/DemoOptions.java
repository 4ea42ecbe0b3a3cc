package io.boxline.demo;

import io.boxline.ValidationException;
import io.boxline.etcd.EtcdCoordination;
import java.io.PrintStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** Command-line options of {@link Demo}, parsed by picocli. */
@Command(
    name = "Demo",
    sortOptions = false,
    usageHelpWidth = 100,
    footer = {
      "%nFrom Maven: ./mvnw -q -pl boxline-demo exec:java -Dexec.args=\"--events 5000\"",
      "A member killed and taken over: -Dexec.args=\"--scenario takeover --coordination etcd\""
    })
final class DemoOptions {
  @Option(
      names = "--events",
      paramLabel = "N",
      converter = Count.class,
      description = "committed events to publish (default 20000)")
  int events = 20_000;

  @Option(
      names = "--producers",
      paramLabel = "N",
      converter = Count.class,
      description = "producer threads (default 4)")
  int producers = 4;

  @Option(
      names = "--partitions",
      paramLabel = "N",
      converter = Count.class,
      description = "partitions of the topic (default 8)")
  int partitions = 8;

  @Option(
      names = "--customers",
      paramLabel = "N",
      converter = Count.class,
      description = "distinct ordering keys (default 200)")
  int customers = 200;

  @Option(
      names = "--rollback-percent",
      paramLabel = "P",
      converter = Count.class,
      description = "share of transactions rolled back on purpose (default 5)")
  int rollbackPercent = 5;

  @Option(
      names = "--plain-jdbc",
      description =
          "producers use their own connection (autocommit off, commit) instead of"
              + " boxline.inTransaction(...)")
  boolean plainJdbc;

  /** Where the consumer groups keep membership and leases. */
  enum CoordinationKind {
    memory,
    database,
    etcd
  }

  @Option(
      names = "--coordination",
      paramLabel = "STORE",
      description = {
        "where the consumer groups keep membership and leases: ${COMPLETION-CANDIDATES}"
            + " (default ${DEFAULT-VALUE}). memory works within one JVM only, which is enough"
            + " here: every member of the demo runs in this process. etcd needs a running etcd"
            + " (--etcd-endpoints)"
      })
  CoordinationKind coordination = CoordinationKind.database;

  static final String DEFAULT_ETCD_ENDPOINTS = "http://127.0.0.1:2379";

  @Option(
      names = "--etcd-endpoints",
      paramLabel = "URLS",
      description =
          "etcd client URLs, comma-separated, for --coordination etcd (default "
              + DEFAULT_ETCD_ENDPOINTS
              + "); the run's keys go under /boxline-demo/<run>/ and are deleted at the end")
  String etcdEndpoints;

  /** What the consumers go through. */
  enum Scenario {
    steady,
    takeover
  }

  @Option(
      names = "--scenario",
      paramLabel = "NAME",
      description = {
        "steady (default): one consumer per subscription, every event exactly once. takeover:"
            + " billing gets two members that share its partitions; one is killed mid-run (no"
            + " goodbye: its check-ins, connections and handlers stop dead) and the other takes"
            + " over its partitions once its check-in deadline has passed. Events the killed member"
            + " had handled but not yet committed are delivered twice, and only those: at most "
            + Demo.CONCURRENCY
            + " workers x "
            + Demo.BATCH_SIZE
            + " events per batch"
      })
  Scenario scenario = Scenario.steady;

  @Option(
      names = "--jdbc-url",
      paramLabel = "URL",
      description = "use this PostgreSQL 13+ instead of starting an embedded one")
  String jdbcUrl;

  @Option(
      names = "--user",
      paramLabel = "USER",
      description = "user for --jdbc-url (default postgres unless the URL has one)")
  String user;

  @Option(
      names = "--password",
      paramLabel = "PASSWORD",
      description = "password for --jdbc-url (default none)")
  String password;

  @Option(
      names = {"--help", "-h"},
      usageHelp = true,
      description = "print this help")
  boolean help;

  /** Whole numbers, with underscores allowed (20_000). */
  static final class Count implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      try {
        return Integer.parseInt(value.replace("_", ""));
      } catch (NumberFormatException e) {
        throw new CommandLine.TypeConversionException("needs a whole number, got '" + value + "'");
      }
    }
  }

  /** The etcd client URLs (the default when none were given). */
  String etcdEndpoints() {
    return etcdEndpoints != null ? etcdEndpoints : DEFAULT_ETCD_ENDPOINTS;
  }

  static String usage() {
    return new CommandLine(new DemoOptions())
        .setCaseInsensitiveEnumValuesAllowed(true)
        .getUsageMessage();
  }

  /**
   * Parses {@code args}; prints the usage for {@code --help}, and the problem and the usage (and
   * returns null) for a bad argument.
   */
  static DemoOptions parse(PrintStream out, String... args) {
    try {
      DemoOptions o = parse(args);
      if (o.help) {
        out.println(usage());
      }
      return o;
    } catch (IllegalArgumentException | ParameterException e) {
      out.println("error: " + e.getMessage());
      out.println(usage());
      return null;
    }
  }

  /**
   * Parses {@code args}; throws {@link ParameterException} or {@link IllegalArgumentException} with
   * a message for the user.
   */
  static DemoOptions parse(String... args) {
    DemoOptions o = new DemoOptions();
    new CommandLine(o).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(args);
    range("--producers", o.producers, 1, 64);
    range("--partitions", o.partitions, 1, 1024);
    range("--events", o.events, 1, Integer.MAX_VALUE);
    range("--customers", o.customers, 1, Integer.MAX_VALUE);
    range("--rollback-percent", o.rollbackPercent, 0, 90);
    if (o.jdbcUrl == null && (o.user != null || o.password != null)) {
      throw new IllegalArgumentException("--user and --password need --jdbc-url");
    }
    if (o.jdbcUrl != null && !o.jdbcUrl.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException(
          "--jdbc-url must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/db), got '"
              + o.jdbcUrl
              + "'");
    }
    if (o.etcdEndpoints != null && o.coordination != CoordinationKind.etcd) {
      throw new IllegalArgumentException("--etcd-endpoints needs --coordination etcd");
    }
    if (o.coordination == CoordinationKind.etcd) {
      try { // the URLs are checked now rather than when the demo is half started
        EtcdCoordination.builder().endpoints(o.etcdEndpoints());
      } catch (ValidationException e) {
        throw new IllegalArgumentException("--etcd-endpoints: " + e.getMessage(), e);
      }
    }
    if (o.scenario == Scenario.takeover && o.partitions < 2) {
      throw new IllegalArgumentException(
          "--scenario takeover needs --partitions 2 or more (two members share them)");
    }
    if (o.customers < o.producers) {
      // Each customer belongs to one producer thread so that its orders commit one after another.
      o.customers = o.producers;
    }
    return o;
  }

  private static void range(String option, int n, int min, int max) {
    if (n < min || n > max) {
      throw new IllegalArgumentException(
          option
              + " must be "
              + (max == Integer.MAX_VALUE ? "at least " + min : "between " + min + " and " + max)
              + ", got "
              + n);
    }
  }
}
