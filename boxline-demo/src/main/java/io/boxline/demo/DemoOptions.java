package io.boxline.demo;

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
    footer = "%nFrom Maven: ./mvnw -q -pl boxline-demo exec:java -Dexec.args=\"--events 5000\"")
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

  static String usage() {
    return new CommandLine(new DemoOptions()).getUsageMessage();
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
    new CommandLine(o).parseArgs(args);
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
