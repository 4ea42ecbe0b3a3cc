package io.boxline.testkit.properties;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.BoxlineException;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * Bad input by the thousand: generated names, paths, keys, types, headers, payloads, idempotency
 * keys, durations and numbers — SQL-injection strings, control characters, NUL, lone surrogates,
 * huge and boundary sizes among them — through the public entry points. Each is accepted and comes
 * back exactly as given, or is refused with a {@link BoxlineException} whose message names the
 * problem, and the database is unchanged.
 */
abstract class BadInputProperties {
  /** Tries per property (jqwik's default is 1,000). */
  static final int TRIES = 1000;

  static final AtomicLong TRIED = new AtomicLong();

  TestDatabase db;
  Boxline boxline;
  TopicName events;

  abstract TestDatabase newDatabase(String hint);

  @BeforeProperty
  void open() {
    db = newDatabase("badinput");
    boxline = db.boxline(b -> b);
    boxline.admin().createNamespace(NamespacePath.of("prop/in"));
    events = TopicName.of("prop/in", "events");
    boxline.admin().createTopic(events, 4, Sequencing.IN_TRANSACTION);
  }

  @AfterProperty
  void close() {
    db.close();
  }

  // ------------------------------------------------------------------ generators

  /** Strings a careless or hostile caller might pass. */
  @Provide
  Arbitrary<String> text() {
    return Arbitraries.oneOf(
        Arbitraries.strings().all().ofMinLength(0).ofMaxLength(40),
        Arbitraries.strings().alpha().numeric().withChars("-_.").ofMinLength(1).ofMaxLength(20),
        Arbitraries.strings().all().ofMinLength(100).ofMaxLength(700),
        Arbitraries.of(
            "",
            " ",
            "a",
            "x'; DROP TABLE boxline.log; --",
            "Robert'); DELETE FROM outbox; --",
            "\" OR \"1\"=\"1",
            "a\u0000b",
            "\u0000",
            "line\nbreak",
            "tab\there",
            "\uD800",
            "lone \uDC00 low",
            "emoji \uD83D\uDE00",
            "${schema}.${p}topic",
            "../../etc/passwd",
            "a/b",
            "/",
            "%s%n%x",
            "ünïcödé ñ",
            "x".repeat(128),
            "x".repeat(129),
            "x".repeat(512),
            "x".repeat(513),
            "x".repeat(70_000)));
  }

  @Provide
  Arbitrary<byte[]> payload() {
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(20, Arbitraries.bytes().array(byte[].class).ofMaxSize(300)),
        net.jqwik.api.Tuple.of(
            5, Arbitraries.of(new byte[0], new byte[] {0}, "{\"a\":1}".getBytes())),
        net.jqwik.api.Tuple.of(
            1,
            Arbitraries.integers()
                .between(1_048_000, 1_049_000)
                .map(n -> new byte[n]))); // around the default 1 MiB limit
  }

  @Provide
  Arbitrary<Duration> duration() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(-5_000, 100_000_000_000L).map(Duration::ofMillis),
        Arbitraries.of(
            Duration.ZERO,
            Duration.ofNanos(1),
            Duration.ofNanos(999_999),
            Duration.ofNanos(1_500_000),
            Duration.ofMillis(50).plusNanos(1),
            Duration.ofDays(365_000)));
  }

  @Provide
  Arbitrary<Double> number() {
    return Arbitraries.oneOf(
        Arbitraries.doubles().between(-10, 2000),
        Arbitraries.of(
            Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0.0, -0.0, 1e300));
  }

  long logSize() {
    return boxline.admin().topicState(events).heads().stream().mapToLong(Long::longValue).sum();
  }

  /** A refusal: Boxline's exception type, a message that says something. */
  static void refusedClearly(RuntimeException e) {
    assertThat(e).isInstanceOf(BoxlineException.class);
    assertThat(e.getMessage()).isNotBlank().hasSizeLessThan(100_000);
  }

  // ------------------------------------------------------------------ properties

  @Property(tries = TRIES)
  void namespacesAndTopicsAreCreatedAsNamedOrRefused(
      @ForAll("text") String namespace, @ForAll("text") String topic) {
    TRIED.incrementAndGet();
    int topicsBefore = boxline.admin().topics().size();
    int namespacesBefore = boxline.admin().namespaces().size();
    TopicName name;
    try {
      NamespacePath ns = NamespacePath.of(namespace);
      name = TopicName.of(ns.toString(), topic);
      boxline.admin().createNamespace(ns);
      boxline.admin().createTopic(name, 1);
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(boxline.admin().topics()).hasSize(topicsBefore);
      assertThat(boxline.admin().namespaces()).hasSize(namespacesBefore);
      return;
    }
    assertThat(boxline.admin().topic(name)).isPresent();
    assertThat(TopicName.parse(name.toString())).isEqualTo(name);
    assertThat(boxline.admin().deleteTopic(name, true)).isTrue();
  }

  @Property(tries = TRIES)
  void subscriptionNamesAreKeptOrRefused(@ForAll("text") String name) {
    TRIED.incrementAndGet();
    int before = boxline.admin().subscriptions().size();
    try {
      boxline.admin().createSubscription(SubscriptionSpec.of(name, events));
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(boxline.admin().subscriptions()).hasSize(before);
      return;
    }
    assertThat(boxline.admin().subscription(name)).isPresent();
    assertThat(boxline.admin().deleteSubscription(name, true)).isTrue();
  }

  @Property(tries = TRIES)
  void eventsComeBackExactlyAsPublishedOrAreRefused(
      @ForAll("text") String key,
      @ForAll("text") String type,
      @ForAll("text") String headerName,
      @ForAll("text") String headerValue,
      @ForAll("text") String idempotencyKey,
      @ForAll("payload") byte[] payload) {
    TRIED.incrementAndGet();
    long before = logSize();
    PublishResult r;
    OutgoingEvent e;
    try {
      e =
          OutgoingEvent.builder(events)
              .key(key)
              .type(type)
              .header(headerName, headerValue)
              .idempotencyKey(idempotencyKey)
              .payload(payload)
              .build();
      r = boxline.inTransaction(tx -> boxline.publisher().publish(tx, e));
    } catch (RuntimeException refused) {
      refusedClearly(refused);
      assertThat(logSize()).as("nothing written").isEqualTo(before);
      return;
    }
    if (r.duplicate()) {
      assertThat(logSize()).isEqualTo(before);
      return;
    }
    List<Event> found =
        boxline.admin().events(EventQuery.of(events, r.partition()).eventId(r.eventId()).limit(1));
    assertThat(found).hasSize(1);
    Event back = found.get(0);
    assertThat(back.key()).isEqualTo(key);
    assertThat(back.type()).isEqualTo(type);
    assertThat(back.headers()).isEqualTo(Map.of(headerName, headerValue));
    assertThat(back.payload()).isEqualTo(payload);
  }

  @Property(tries = TRIES)
  void policiesAreKeptOrRefusedAndTheOldOneStays(
      @ForAll("number") double rate,
      @ForAll("number") double slack,
      @ForAll("duration") Duration interval,
      @ForAll("duration") Duration grace,
      @ForAll("duration") Duration idle,
      @ForAll("duration") Duration maxAge) {
    TRIED.incrementAndGet();
    String sub = "policy-target";
    if (boxline.admin().subscription(sub).isEmpty()) {
      boxline.admin().createSubscription(SubscriptionSpec.of(sub, events));
    }
    GroupPolicy before = boxline.admin().groupPolicy(sub);
    try {
      GroupPolicy p =
          GroupPolicy.DEFAULT
              .withCheckInRate(rate)
              .withSlack(slack)
              .withMinCheckInInterval(interval)
              .withReleaseGrace(grace)
              .withIdleRelease(idle);
      boxline.admin().setGroupPolicy(sub, p);
      assertThat(boxline.admin().groupPolicy(sub)).isEqualTo(p);
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(e).isInstanceOf(ValidationException.class);
      assertThat(boxline.admin().groupPolicy(sub)).isEqualTo(before);
    }
    RetentionPolicy retentionBefore = boxline.admin().topicState(events).retention();
    try {
      RetentionPolicy r = RetentionPolicy.byAge(maxAge);
      boxline.admin().setRetention(events, r);
      assertThat(boxline.admin().topicState(events).retention()).isEqualTo(r);
    } catch (RuntimeException e) {
      refusedClearly(e);
      assertThat(boxline.admin().topicState(events).retention()).isEqualTo(retentionBefore);
    }
  }
}
