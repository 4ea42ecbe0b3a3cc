package io.boxline.testkit.badinput;

import static io.boxline.testkit.badinput.Inputs.refusedClearly;
import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Names;
import io.boxline.RetryPolicy;
import io.boxline.ValidationException;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Bad input through the builders that take no database round trip: retry policies, Boxline's
 * settings and the JDBC store's. Each value is accepted exactly when the documented range holds it
 * (the model below restates the Javadoc), and a refusal is a {@code ValidationException} naming the
 * setting.
 */
class BuilderBadInputProperties {
  static final int RETRY_TRIES = 2000;
  static final int BOXLINE_TRIES = 1000;
  static final int STORE_TRIES = 2000;

  /** A store for Boxline's builder to hold; build() connects to nothing else. */
  private static TestDatabase db;

  @BeforeContainer
  static void open() {
    db = TestDatabase.createH2("badbuild");
  }

  @AfterContainer
  static void close() {
    db.close();
  }

  @Provide
  Arbitrary<Duration> duration() {
    return Inputs.duration();
  }

  @Provide
  Arbitrary<Integer> count() {
    return Inputs.count();
  }

  @Provide
  Arbitrary<Double> number() {
    return Inputs.number();
  }

  @Provide
  Arbitrary<String> textOrNull() {
    return Inputs.textOrNull();
  }

  private static boolean within(Duration d, Duration min, Duration max) {
    return d.compareTo(min) >= 0 && d.compareTo(max) <= 0;
  }

  /** The longest backoff and in-place time (10 years, as Boxline's other ages). */
  private static final Duration LONGEST_BACKOFF = Duration.ofDays(3653);

  @Property(tries = RETRY_TRIES)
  void retryPoliciesAreKeptOrRefused(
      @ForAll("duration") Duration initial,
      @ForAll("duration") Duration max,
      @ForAll("duration") Duration inPlaceTime,
      @ForAll("number") double multiplier,
      @ForAll("number") double jitter,
      @ForAll("count") int inPlaceAttempts,
      @ForAll("count") int maxAttempts) {
    boolean valid =
        initial.compareTo(Duration.ZERO) > 0
            && max.compareTo(initial) >= 0
            && max.compareTo(LONGEST_BACKOFF) <= 0
            && inPlaceTime.compareTo(Duration.ZERO) > 0
            && inPlaceTime.compareTo(LONGEST_BACKOFF) <= 0
            && multiplier >= 1
            && multiplier <= 100
            && jitter >= 0
            && jitter <= 1
            && inPlaceAttempts >= 1
            && inPlaceAttempts <= 1000
            && maxAttempts >= inPlaceAttempts;
    RetryPolicy p;
    try {
      p =
          RetryPolicy.exponential(initial, max)
              .inPlaceTime(inPlaceTime)
              .multiplier(multiplier)
              .jitter(jitter)
              .inPlaceAttempts(inPlaceAttempts)
              .maxAttempts(maxAttempts);
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(valid).as("refused within the documented ranges: %s", e.getMessage()).isFalse();
      return;
    }
    assertThat(valid).as("accepted outside the documented ranges: %s", p).isTrue();
    assertThat(p.inPlaceAttempts()).isEqualTo(inPlaceAttempts);
    assertThat(p.maxAttempts()).isEqualTo(maxAttempts);
    assertThat(p.inPlaceTime()).isEqualTo(inPlaceTime);
    // Every delay is at least 1 ms and at most the longest backoff with its jitter, and a consumer
    // can add it to the clock and store the result.
    Random random = new Random(42);
    long ceiling = (long) Math.ceil(Math.max(1, max.toMillis()) * (1 + jitter)) + 1;
    for (int attempt : new int[] {1, 2, 3, 30, 64, 1000, maxAttempts}) {
      Duration d = p.delayAfter(attempt, random);
      assertThat(d.toMillis()).as("delay after %d", attempt).isBetween(1L, ceiling);
      assertThat(Instant.now().plus(d)).isBefore(Instant.parse("9999-12-31T23:59:59Z"));
    }
  }

  @Property(tries = BOXLINE_TRIES)
  void boxlineSettingsAreKeptOrRefused(
      @ForAll("count") int maxPayloadBytes,
      @ForAll("count") int sequencerBatchSize,
      @ForAll("duration") Duration lease,
      @ForAll("duration") Duration idlePoll,
      @ForAll("duration") Duration spacing,
      @ForAll("duration") Duration notify,
      @ForAll("duration") Duration retention,
      @ForAll("duration") Duration keep,
      @ForAll("textOrNull") String instanceId) {
    Duration tenYears = Duration.ofDays(3653);
    boolean valid =
        maxPayloadBytes >= 1
            && maxPayloadBytes <= 64 * 1024 * 1024
            && sequencerBatchSize >= 1
            && sequencerBatchSize <= 50_000
            && within(lease, Duration.ofSeconds(1), Duration.ofMinutes(10))
            && within(idlePoll, Duration.ofMillis(10), Duration.ofMinutes(1))
            && within(spacing, Duration.ZERO, Duration.ofMillis(100))
            && within(notify, Duration.ZERO, Duration.ofSeconds(10))
            && within(retention, Duration.ofMillis(100), Duration.ofDays(1))
            && within(keep, Duration.ofSeconds(1), tenYears)
            && (instanceId == null || validInstanceId(instanceId));
    Boxline b;
    try {
      b =
          Boxline.builder()
              .store(JdbcStore.builder(db.dataSource()).schema(db.schema()).build())
              .maxPayloadBytes(maxPayloadBytes)
              .sequencerBatchSize(sequencerBatchSize)
              .sequencerLease(lease)
              .sequencerIdlePoll(idlePoll)
              .sequencerBatchSpacing(spacing)
              .producerNotifyInterval(notify)
              .retentionInterval(retention)
              .inboxRetention(keep)
              .deadLetterRetention(keep)
              .idempotencyRetention(keep)
              .instanceId(instanceId)
              .build();
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(valid).as("refused within the documented ranges: %s", e.getMessage()).isFalse();
      return;
    }
    b.close();
    assertThat(valid).as("accepted outside the documented ranges").isTrue();
  }

  private static boolean validInstanceId(String id) {
    if (id.isBlank() || id.length() > 128) {
      return false;
    }
    try {
      Names.requireStorable("instanceId", id, 128);
      return true;
    } catch (ValidationException e) {
      return false;
    }
  }

  @Property(tries = STORE_TRIES)
  void storeSettingsAreKeptOrRefused(
      @ForAll("textOrNull") String schema,
      @ForAll("textOrNull") String prefix,
      @ForAll("count") int vacuumEvery,
      @ForAll("duration") Duration longTransaction,
      @ForAll("duration") Duration fastest,
      @ForAll("duration") Duration slowest) {
    boolean schemaOk =
        schema != null && schema.length() <= 48 && schema.matches("[a-z_][a-z0-9_]*");
    boolean prefixOk = prefix != null && prefix.length() <= 16 && prefix.matches("[a-z0-9_]*");
    boolean valid =
        schemaOk
            && prefixOk
            && vacuumEvery >= 0
            && !longTransaction.isNegative()
            && fastest.compareTo(Duration.ofMillis(1)) >= 0
            && slowest.compareTo(fastest) >= 0
            && slowest.compareTo(Duration.ofMinutes(1)) <= 0;
    try {
      JdbcStore.builder(db.dataSource())
          .schema(schema)
          .tablePrefix(prefix)
          .outboxVacuumEvery(vacuumEvery)
          .longTransactionWarning(longTransaction)
          .wakeupPoll(fastest, slowest);
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(valid).as("refused within the documented ranges: %s", e.getMessage()).isFalse();
      return;
    }
    assertThat(valid).as("accepted outside the documented ranges").isTrue();
  }

  /** Schema names and prefixes become SQL identifiers: only plain ones reach the DDL. */
  @Property(tries = STORE_TRIES)
  void exportedDdlNamesOnlyPlainIdentifiers(
      @ForAll("textOrNull") String schema,
      @ForAll("textOrNull") String prefix,
      @ForAll JdbcStore.Database database) {
    String ddl;
    try {
      ddl = JdbcStore.exportDdl(database, schema, prefix);
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(e.getMessage()).containsAnyOf("schema", "prefix");
      return;
    }
    assertThat(schema).matches("[a-z_][a-z0-9_]{0,47}");
    assertThat(prefix).matches("[a-z0-9_]{0,16}");
    assertThat(ddl).contains(schema + "." + prefix + "outbox");
  }

  /**
   * Regression: a slowest poll up to 1 min 59.999 s was accepted ("at most 1 minute"), and a huge
   * fastest one failed with an ArithmeticException.
   */
  @Example
  void aSlowestWakeupPollOverAMinuteIsRefused() {
    JdbcStore.Builder b = JdbcStore.builder(db.dataSource());
    b.wakeupPoll(Duration.ofMillis(1), Duration.ofMinutes(1));
    for (Duration slowest :
        new Duration[] {Duration.ofMinutes(1).plusNanos(1), Duration.ofSeconds(90)}) {
      try {
        b.wakeupPoll(Duration.ofMillis(1), slowest);
        throw new AssertionError(slowest + " accepted");
      } catch (ValidationException e) {
        assertThat(e.getMessage()).contains("wakeupPoll").contains("1 minute");
      }
    }
    Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
    try {
      b.wakeupPoll(huge, huge);
      throw new AssertionError("a huge poll accepted");
    } catch (ValidationException e) {
      assertThat(e.getMessage()).contains("wakeupPoll");
    }
  }

  /** The log's segment width: 1 s to 366 days, and null is refused by name. */
  @Example
  void aLogSegmentWidthOutsideItsRangeIsRefused() {
    JdbcStore.Builder b = JdbcStore.builder(db.dataSource());
    b.logSegmentWidth(Duration.ofSeconds(1)).logSegmentWidth(Duration.ofDays(366));
    for (Duration d :
        new Duration[] {
          null, Duration.ZERO, Duration.ofMillis(999), Duration.ofDays(367), Duration.ofSeconds(-5)
        }) {
      try {
        b.logSegmentWidth(d);
        throw new AssertionError(d + " accepted");
      } catch (ValidationException e) {
        assertThat(e.getMessage()).contains("logSegmentWidth").contains("1 second");
      }
    }
  }

  /** Regression: a backoff of a million years was accepted and overflowed in delayAfter. */
  @Example
  void aBackoffOverTenYearsIsRefused() {
    RetryPolicy.exponential(Duration.ofSeconds(1), Duration.ofDays(3653));
    for (Duration d : new Duration[] {Duration.ofDays(3654), Duration.ofSeconds(Long.MAX_VALUE)}) {
      try {
        RetryPolicy.exponential(Duration.ofSeconds(1), d);
        throw new AssertionError(d + " accepted");
      } catch (ValidationException e) {
        assertThat(e.getMessage()).contains("maxBackoff").contains("10 years");
      }
    }
  }

  /** Regression: an invalid schema name of 4,000 characters was repeated whole in the message. */
  @Example
  void aLongBadSchemaNameIsAbbreviated() {
    try {
      JdbcStore.builder(db.dataSource()).schema("x'".repeat(2000));
      throw new AssertionError("accepted");
    } catch (ValidationException e) {
      assertThat(e.getMessage()).startsWith("schema 'x'x'").hasSizeLessThan(200);
    }
  }
}
