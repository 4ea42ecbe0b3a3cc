package io.boxline.demo;

import java.io.PrintStream;

/** Command-line options of {@link Demo}. */
final class DemoOptions {
  static final String USAGE =
      String.join(
          "\n",
          "Usage: Demo [options]",
          "  --events N            committed events to publish (default 20000)",
          "  --producers N         producer threads (default 4)",
          "  --partitions N        partitions of the topic (default 8)",
          "  --customers N         distinct ordering keys (default 200)",
          "  --rollback-percent P  share of transactions rolled back on purpose (default 5)",
          "  --plain-jdbc          producers use their own connection (autocommit off, commit)",
          "                        instead of boxline.inTransaction(...)",
          "  --jdbc-url URL        use this PostgreSQL 13+ instead of starting an embedded one",
          "  --user USER           user for --jdbc-url (default postgres unless the URL has one)",
          "  --password PASSWORD   password for --jdbc-url (default none)",
          "  --help                print this help",
          "",
          "From Maven: ./mvnw -q -pl boxline-demo exec:java -Dexec.args=\"--events 5000\"");

  int events = 20_000;
  int producers = 4;
  int partitions = 8;
  int customers = 200;
  int rollbackPercent = 5;
  boolean plainJdbc;
  String jdbcUrl;
  String user;
  String password;
  boolean help;

  /**
   * Parses {@code args}; prints the usage for {@code --help}, and the problem and the usage (and
   * returns null) for a bad argument.
   */
  static DemoOptions parse(PrintStream out, String... args) {
    try {
      DemoOptions o = parse(args);
      if (o.help) {
        out.println(USAGE);
      }
      return o;
    } catch (IllegalArgumentException e) {
      out.println("error: " + e.getMessage());
      out.println(USAGE);
      return null;
    }
  }

  /** Parses {@code args}; throws {@link IllegalArgumentException} with a message for the user. */
  static DemoOptions parse(String... args) {
    DemoOptions o = new DemoOptions();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String value = null;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) { // --events=100 works too
        value = a.substring(eq + 1);
        a = a.substring(0, eq);
      }
      switch (a) {
        case "--help", "-h" -> o.help = true;
        case "--plain-jdbc" -> o.plainJdbc = true;
        case "--events" -> o.events = intValue(a, value != null ? value : next(args, ++i, a), 1);
        case "--producers" ->
            o.producers = intValue(a, value != null ? value : next(args, ++i, a), 1, 64);
        case "--partitions" ->
            o.partitions = intValue(a, value != null ? value : next(args, ++i, a), 1, 1024);
        case "--customers" ->
            o.customers = intValue(a, value != null ? value : next(args, ++i, a), 1);
        case "--rollback-percent" ->
            o.rollbackPercent = intValue(a, value != null ? value : next(args, ++i, a), 0, 90);
        case "--jdbc-url" -> o.jdbcUrl = value != null ? value : next(args, ++i, a);
        case "--user" -> o.user = value != null ? value : next(args, ++i, a);
        case "--password" -> o.password = value != null ? value : next(args, ++i, a);
        default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'");
      }
    }
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

  private static String next(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }

  private static int intValue(String option, String value, int min) {
    return intValue(option, value, min, Integer.MAX_VALUE);
  }

  private static int intValue(String option, String value, int min, int max) {
    int n;
    try {
      n = Integer.parseInt(value.replace("_", ""));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " needs a whole number, got '" + value + "'");
    }
    if (n < min || n > max) {
      throw new IllegalArgumentException(
          option
              + " must be "
              + (max == Integer.MAX_VALUE ? "at least " + min : "between " + min + " and " + max)
              + ", got "
              + n);
    }
    return n;
  }
}
