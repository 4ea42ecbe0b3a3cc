package io.boxline.testkit.badinput;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.BoxlineException;
import io.boxline.NotFoundException;
import io.boxline.ValidationException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import javax.sql.DataSource;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Tuple;

/**
 * The generators of the bad-input properties: what a careless or hostile caller might pass, mixed
 * with ordinary values so that accepted input is tried as often as refused input.
 */
final class Inputs {
  private Inputs() {}

  /** Fixed strings that broke, or could break, something somewhere. */
  static final String[] NASTY = {
    "",
    " ",
    "\u2003",
    "a",
    "x'; DROP TABLE log; --",
    "Robert'); DELETE FROM outbox; --",
    "\" OR \"1\"=\"1",
    "1; SELECT pg_sleep(10)",
    "\\",
    "'",
    "a\u0000b",
    "\u0000",
    "line\nbreak",
    "tab\there",
    "\u007f",
    "\u0085",
    "\uD800",
    "lone \uDC00 low",
    "high at end \uD83D",
    "emoji \uD83D\uDE00",
    "\uFEFFbom",
    "\uFFFF",
    "${schema}.${p}topic",
    "../../etc/passwd",
    "a/b",
    "/",
    "a//b",
    "%s%n%x",
    "ünïcödé ñ",
    "null",
    "{\"a\":1}",
    "x".repeat(128),
    "x".repeat(129),
    "x".repeat(256),
    "x".repeat(257),
    "x".repeat(512),
    "x".repeat(513),
    "\uD83D\uDE00".repeat(300),
    "x".repeat(4096),
    "x".repeat(4097),
    "x".repeat(65_536),
    "x".repeat(65_537)
  };

  /** Names, keys, types and values: any UTF-16 (lone surrogates included), plain, huge, nasty. */
  static Arbitrary<String> text() {
    return Arbitraries.frequencyOf(
        Tuple.of(4, Arbitraries.strings().all().ofMinLength(0).ofMaxLength(30)),
        Tuple.of(
            4,
            Arbitraries.strings()
                .alpha()
                .numeric()
                .withChars("-_.")
                .ofMinLength(1)
                .ofMaxLength(20)),
        Tuple.of(1, Arbitraries.strings().all().ofMinLength(100).ofMaxLength(600)),
        Tuple.of(3, Arbitraries.of(NASTY)));
  }

  /** Like {@link #text()}, sometimes null. */
  static Arbitrary<String> textOrNull() {
    return text().injectNull(0.15);
  }

  /** Up to four headers with generated names and values. */
  static Arbitrary<Map<String, String>> headers() {
    return Arbitraries.maps(text(), text()).ofMaxSize(4);
  }

  /** Bytes of any kind, empty, and around the default 1 MiB payload limit. */
  static Arbitrary<byte[]> payload() {
    return Arbitraries.frequencyOf(
        Tuple.of(20, Arbitraries.bytes().array(byte[].class).ofMaxSize(300)),
        Tuple.of(
            5,
            Arbitraries.of(
                new byte[0], new byte[] {0}, "{\"a\":1}".getBytes(StandardCharsets.UTF_8))),
        Tuple.of(1, Arbitraries.of(1_048_575, 1_048_576, 1_048_577).map(n -> new byte[n])));
  }

  /** Instants: ordinary ones with nanoseconds, and the far ends of Java's and SQL's ranges. */
  static Arbitrary<Instant> instant() {
    return Arbitraries.frequencyOf(
        Tuple.of(
            6,
            Arbitraries.longs()
                .between(-5_000_000_000L, 10_000_000_000L)
                .flatMap(
                    s ->
                        Arbitraries.integers()
                            .between(0, 999_999_999)
                            .map(n -> Instant.ofEpochSecond(s, n)))),
        Tuple.of(
            3,
            Arbitraries.of(
                Instant.MIN,
                Instant.MAX,
                Instant.EPOCH,
                Instant.EPOCH.minusNanos(1),
                Instant.EPOCH.minusNanos(1_500),
                Instant.parse("0001-01-01T00:00:00Z"),
                Instant.parse("1000-06-15T12:00:00.123456Z"),
                Instant.parse("1582-10-10T00:00:00Z"),
                Instant.parse("0000-12-31T23:59:59.999999Z"),
                Instant.parse("1900-01-01T00:00:00Z"),
                Instant.parse("2038-01-19T03:14:08Z"),
                Instant.parse("9999-12-31T23:59:59.999999Z"),
                Instant.parse("9999-12-31T23:59:59.999999999Z"),
                Instant.parse("+10000-01-01T00:00:00Z"),
                Instant.parse("+294277-01-01T00:00:00Z"),
                Instant.now().truncatedTo(ChronoUnit.MICROS),
                Instant.now().plus(Duration.ofDays(1)))));
  }

  /** Durations: negative, zero, sub-millisecond, ordinary, huge, the largest Java has. */
  static Arbitrary<Duration> duration() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(-5_000, 10_000_000).map(Duration::ofMillis),
        Arbitraries.longs().between(-1, 5_000_000).map(Duration::ofNanos),
        Arbitraries.of(
            Duration.ZERO,
            Duration.ofNanos(1),
            Duration.ofNanos(999_999),
            Duration.ofMillis(1),
            Duration.ofMillis(1).plusNanos(1),
            Duration.ofMillis(10),
            Duration.ofMillis(100),
            Duration.ofSeconds(1),
            Duration.ofMinutes(1),
            Duration.ofMinutes(1).plusNanos(1),
            Duration.ofSeconds(119),
            Duration.ofMinutes(10),
            Duration.ofDays(1),
            Duration.ofDays(3653),
            Duration.ofDays(3654),
            Duration.ofDays(365_000),
            Duration.ofSeconds(Long.MAX_VALUE / 1000),
            Duration.ofSeconds(Long.MAX_VALUE, 999_999_999),
            Duration.ofSeconds(Long.MIN_VALUE)));
  }

  /** Counts: small ones, zero, negative, the limits of int. */
  static Arbitrary<Integer> count() {
    return Arbitraries.oneOf(
        Arbitraries.integers().between(-3, 70),
        Arbitraries.of(
            Integer.MIN_VALUE,
            -1,
            0,
            1,
            1000,
            1001,
            10_000,
            10_001,
            50_000,
            50_001,
            Integer.MAX_VALUE));
  }

  static Arbitrary<Double> number() {
    return Arbitraries.oneOf(
        Arbitraries.doubles().between(-10, 200),
        Arbitraries.of(
            Double.NaN,
            Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY,
            0.0,
            -0.0,
            1.0,
            100.0,
            100.0000001,
            Double.MIN_VALUE,
            1e300));
  }

  /**
   * A refusal of the Java API: a {@link ValidationException} (bad value) or a {@link
   * NotFoundException} (a name that does not exist), whose message is short enough to read and
   * holds no SQL error.
   */
  static void refusedClearly(RuntimeException e) {
    assertThat(e)
        .as("refused with Boxline's exception, not %s", e.getClass().getName())
        .isInstanceOfAny(ValidationException.class, NotFoundException.class);
    assertThat(e).isInstanceOf(BoxlineException.class);
    assertThat(e.getMessage()).isNotBlank().hasSizeLessThan(2_000);
    assertThat(e.getMessage().toLowerCase()).doesNotContain("sqlstate").doesNotContain("syntax");
  }

  /**
   * {@code SELECT count(*) FROM <table>} for each table, summed: the rows a refusal must not add.
   */
  static long rows(DataSource ds, String... tables) {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      long n = 0;
      for (String table : tables) {
        try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
          rs.next();
          n += rs.getLong(1);
        }
      }
      return n;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** What a JDBC driver sends for {@code s}: UTF-8, with a lone surrogate as '?'. */
  static String asSent(String s) {
    return s == null
        ? null
        : new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
  }
}
