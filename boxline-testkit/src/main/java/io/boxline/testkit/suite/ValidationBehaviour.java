package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.ConnectionStateException;
import io.boxline.DeadLetterQuery;
import io.boxline.Event;
import io.boxline.EventTypes;
import io.boxline.Names;
import io.boxline.NotFoundException;
import io.boxline.OutgoingEvent;
import io.boxline.PayloadTooLargeException;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** Bad input against a real store: each gets a clear exception and nothing is half-written. */
public abstract class ValidationBehaviour {
  protected TestDatabase db;
  private Boxline boxline;
  private TopicName topic;

  protected abstract TestDatabase newDatabase(String hint);

  @BeforeEach
  void open(TestInfo info) {
    db = newDatabase(info.getTestMethod().map(m -> m.getName()).orElse("v"));
    boxline = db.boxline(b -> b.eventTypes(EventTypes.empty()).maxPayloadBytes(1000));
    topic = topic(boxline, "acme/valid/orders", 2);
  }

  @AfterEach
  void close() {
    db.close();
  }

  private long outboxRows() throws Exception {
    try (Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT (SELECT count(*) FROM "
                    + db.schema()
                    + ".outbox) + (SELECT count(*) FROM "
                    + db.schema()
                    + ".log)")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void unknownTopicSaysHowToCreateIt() throws Exception {
    TopicName missing = TopicName.of("acme/valid", "nope");
    assertThatThrownBy(
            () ->
                boxline.inTransaction(
                    tx -> boxline.publisher().publish(tx, raw(missing, "k", "x"))))
        .isInstanceOf(NotFoundException.class)
        .hasMessageContaining("acme/valid/nope")
        .hasMessageContaining("createTopic");
    assertThat(outboxRows()).isZero();
  }

  @Test
  void oversizedPayloadIsRefusedAndNothingOfTheBatchIsWritten() throws Exception {
    OutgoingEvent ok = OutgoingEvent.builder(topic).type("t").payload(new byte[10]).build();
    OutgoingEvent big = OutgoingEvent.builder(topic).type("t").payload(new byte[1001]).build();
    assertThatThrownBy(
            () ->
                boxline.inTransaction(
                    tx -> boxline.publisher().publishAll(tx, java.util.List.of(ok, big))))
        .isInstanceOf(PayloadTooLargeException.class)
        .hasMessageContaining("1001 bytes")
        .hasMessageContaining("limit of 1000")
        .hasMessageContaining("maxPayloadBytes");
    assertThat(outboxRows()).isZero();
  }

  @Test
  void closedConnectionIsRefused() throws Exception {
    Connection c = db.dataSource().getConnection();
    c.setAutoCommit(false);
    c.close();
    assertThatThrownBy(() -> boxline.publisher().publish(c, raw(topic, "k", "x")))
        .isInstanceOf(ConnectionStateException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void autoCommitConnectionIsRefusedBecauseItWouldBreakAtomicity() throws Exception {
    try (Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(true);
      assertThatThrownBy(() -> boxline.publisher().publish(c, raw(topic, "k", "x")))
          .isInstanceOf(ConnectionStateException.class)
          .hasMessageContaining("auto-commit")
          .hasMessageContaining("setAutoCommit(false)");
    }
    assertThat(outboxRows()).isZero();
  }

  @Test
  void unregisteredTypedEventSaysHowToRegisterIt() {
    assertThatThrownBy(
            () -> boxline.inTransaction(tx -> boxline.publisher().publish(tx, "a string")))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("java.lang.String")
        .hasMessageContaining("EventTypes.builder().register");
  }

  @Test
  void partitionCountsAreBoundedAndNeverChange() {
    TopicName t = TopicName.of("acme/valid", "p");
    assertThatThrownBy(() -> boxline.admin().createTopic(t, 0))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("1 to 65536");
    assertThatThrownBy(() -> boxline.admin().createTopic(t, 65_537))
        .isInstanceOf(ValidationException.class);
    assertThat(boxline.admin().createTopic(t, 65_536).partitions()).isEqualTo(65_536);
    assertThat(boxline.admin().createTopic(t, 65_536).partitions()).isEqualTo(65_536);
    assertThatThrownBy(() -> boxline.admin().createTopic(t, 3))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("already exists with 65536 partitions");
  }

  @Test
  void topicInMissingNamespaceSaysToCreateTheNamespace() {
    assertThatThrownBy(() -> boxline.admin().createTopic(TopicName.of("nowhere/x", "t"), 1))
        .isInstanceOf(NotFoundException.class)
        .hasMessageContaining("createNamespace");
  }

  @Test
  void subscriptionsMustNameExistingTopicsAndExist() {
    assertThatThrownBy(
            () ->
                boxline
                    .admin()
                    .createSubscription(
                        SubscriptionSpec.of("s", TopicName.of("acme/valid", "missing"))))
        .isInstanceOf(NotFoundException.class)
        .hasMessageContaining("acme/valid/missing");
    assertThat(boxline.admin().subscription("s")).isEmpty();
    assertThatThrownBy(() -> boxline.consumer("nope"))
        .isInstanceOf(NotFoundException.class)
        .hasMessageContaining("createSubscription");
    boxline.admin().createSubscription(SubscriptionSpec.of("s", topic));
    TopicName other = topic(boxline, "acme/valid/other", 1);
    assertThatThrownBy(() -> boxline.admin().createSubscription(SubscriptionSpec.of("s", other)))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("already exists");
  }

  @Test
  void consumerSettingsAreChecked() {
    boxline.admin().createSubscription(SubscriptionSpec.of("s", topic));
    assertThatThrownBy(() -> boxline.consumer("s").batchSize(0))
        .isInstanceOf(ValidationException.class);
    assertThatThrownBy(() -> boxline.consumer("s").concurrency(1000))
        .isInstanceOf(ValidationException.class);
    assertThatThrownBy(() -> boxline.consumer("s").start())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining(
            "exactly one of handler(...), batchHandler(...) and transactionalHandler(...)");
  }

  // ---------------------------------------------------------------- generated strings

  /** Fields of an event that hold strings, with the name their refusal must give. */
  private enum Field {
    TYPE("event type", Names.MAX_LABEL_LENGTH, true),
    KEY("event key", Names.MAX_KEY_LENGTH, false),
    SOURCE("event source", Names.MAX_SOURCE_LENGTH, false),
    CONTENT_TYPE("content type", Names.MAX_LABEL_LENGTH, true),
    HEADER_NAME("header name", Names.MAX_LABEL_LENGTH, true),
    HEADER_VALUE("value of header", Names.MAX_HEADER_VALUE_LENGTH, false),
    IDEMPOTENCY_KEY("idempotency key", Names.MAX_KEY_LENGTH, false);

    final String named;
    final int max;
    final boolean label;

    Field(String named, int max, boolean label) {
      this.named = named;
      this.max = max;
      this.label = label;
    }
  }

  private static final String ALPHABET =
      "abcXYZ019 -_./:'\"\\;%{}[]<>&字ü\u00e9\u0301\u200b\u202e😀𝄞";

  /** A random string every database stores exactly (what a label may hold, if {@code label}). */
  private static String storable(Random r, int maxLength, boolean label) {
    int n = r.nextInt(20) == 0 ? maxLength : 1 + r.nextInt(Math.min(maxLength, 40));
    StringBuilder b = new StringBuilder();
    int[] cps = ALPHABET.codePoints().toArray();
    while (b.length() < n) {
      int cp = cps[r.nextInt(cps.length)];
      if (Character.charCount(cp) > n - b.length()) {
        cp = 'x';
      }
      b.appendCodePoint(cp);
    }
    String s = b.toString();
    if (r.nextInt(10) == 0) {
      s = "'; DROP TABLE outbox; --" + s;
      int end = Math.min(s.length(), maxLength);
      if (Character.isHighSurrogate(s.charAt(end - 1))) {
        end--; // never cut a pair in two
      }
      s = s.substring(0, end);
    }
    return label && s.isBlank() ? "x" + s.substring(1) : s;
  }

  /**
   * A string {@code field} must refuse: a NUL, an unpaired surrogate, a control character in a
   * label, too long, blank.
   */
  private static String unstorable(Random r, Field field) {
    String base = storable(r, 30, field.label);
    int at = r.nextInt(base.length() + 1);
    if (at > 0 && at < base.length() && Character.isLowSurrogate(base.charAt(at))) {
      at--; // insert between characters, never inside a pair
    }
    int kind = r.nextInt(field.label ? 7 : 5);
    switch (kind) {
      case 0:
        return base.substring(0, at) + '\0' + base.substring(at);
      case 1:
        return base.substring(0, at) + '\ud83d' + "x" + base.substring(at);
      case 2:
        return base.substring(0, at) + "x\ude00" + base.substring(at);
      case 3:
        return base.substring(0, at) + "\ude00\ud83d" + base.substring(at);
      case 4:
        return "y".repeat(field.max + 1 + r.nextInt(100));
      case 5:
        char[] controls = {'\n', '\t', '\r', '\u0001', '\u001f', '\u007f', '\u0085', '\u009f'};
        return base.substring(0, at) + controls[r.nextInt(controls.length)] + base.substring(at);
      default:
        return r.nextBoolean() ? "" : " ".repeat(1 + r.nextInt(3));
    }
  }

  private OutgoingEvent eventWith(Field field, String value) {
    OutgoingEvent.Builder b =
        OutgoingEvent.builder(topic).type("t").payload(new byte[] {1}).header("h", "v");
    switch (field) {
      case TYPE:
        b.type(value);
        break;
      case KEY:
        b.key(value);
        break;
      case SOURCE:
        b.source(value);
        break;
      case CONTENT_TYPE:
        b.contentType(value);
        break;
      case HEADER_NAME:
        b.header(value, "v");
        break;
      case HEADER_VALUE:
        b.header("h", value);
        break;
      case IDEMPOTENCY_KEY:
        b.idempotencyKey(value);
        break;
      default:
        throw new IllegalArgumentException(field.name());
    }
    return b.build();
  }

  /**
   * A thousand generated strings no database can store exactly (NUL characters, unpaired
   * surrogates, control characters in labels, over-long and blank values), each in a random field
   * of an event published after a good one in the same call: every one is refused with a
   * ValidationException naming the field, and nothing of the batch is written.
   */
  @Test
  void unstorableStringsAreRefusedNamingTheFieldAndNothingIsWritten() throws Exception {
    long seed = System.nanoTime();
    Random r = new Random(seed);
    long before = outboxRows();
    Field[] fields = Field.values();
    int tried = 0;
    for (int i = 0; i < 1000; i++) {
      Field field = fields[r.nextInt(fields.length)];
      String bad = unstorable(r, field);
      if (field == Field.TYPE && bad.isBlank()) {
        assertThatThrownBy(() -> eventWith(field, bad))
            .as("seed " + seed + ": " + field + " " + bad)
            .isInstanceOf(ValidationException.class)
            .hasMessageContaining("event type must be set");
        tried++;
        continue;
      }
      assertThatThrownBy(
              () ->
                  boxline.inTransaction(
                      tx ->
                          boxline
                              .publisher()
                              .publishAll(
                                  tx, List.of(raw(topic, "k", "good"), eventWith(field, bad)))))
          .as("seed " + seed + ": " + field + " " + bad.length() + " chars")
          .isInstanceOf(ValidationException.class)
          .hasMessageContaining(field.named);
      tried++;
    }
    assertThat(tried).isEqualTo(1000);
    assertThat(outboxRows()).as("nothing written").isEqualTo(before);
  }

  /** A header without a value is refused naming the header, through the builder and the options. */
  @Test
  void aHeaderWithoutValueIsRefusedNamingIt() {
    assertThatThrownBy(() -> OutgoingEvent.builder(topic).type("t").header("tenant", null))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("header 'tenant' has a null value");
    assertThatThrownBy(() -> OutgoingEvent.builder(topic).type("t").header(null, "v"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("header name");
  }

  /**
   * Generated strings every database can store (quotes, backslashes, SQL fragments, combining and
   * invisible characters, characters outside the BMP, values at their length limits) round-trip
   * exactly through publish, the log and a consumer.
   */
  @Test
  void storableStringsRoundTripExactly() {
    long seed = System.nanoTime();
    Random r = new Random(seed);
    List<OutgoingEvent> sent = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      OutgoingEvent.Builder b =
          OutgoingEvent.builder(topic)
              .type(storable(r, Names.MAX_LABEL_LENGTH, true))
              .key(storable(r, Names.MAX_KEY_LENGTH, false))
              .source(storable(r, Names.MAX_SOURCE_LENGTH, false))
              .contentType(storable(r, Names.MAX_LABEL_LENGTH, true))
              .idempotencyKey(i + "-" + storable(r, Names.MAX_KEY_LENGTH - 10, false))
              .payload(storable(r, 100, false).getBytes(StandardCharsets.UTF_8));
      int headers = r.nextInt(4);
      for (int h = 0; h < headers; h++) {
        b.header(
            storable(r, Names.MAX_LABEL_LENGTH, true),
            r.nextInt(50) == 0
                ? "v".repeat(Names.MAX_HEADER_VALUE_LENGTH)
                : storable(r, 200, false));
      }
      sent.add(b.build());
    }
    for (int i = 0; i < sent.size(); i += 10) {
      List<OutgoingEvent> batch = sent.subList(i, i + 10);
      boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
    }
    SuiteSupport.Recorder seen = SuiteSupport.record(boxline, "roundtrip", topic);
    Await.until(SuiteSupport.WAIT, "200 events", () -> seen.size() >= sent.size());
    Map<UUID, Event> byId = new HashMap<>();
    seen.all.forEach(e -> byId.put(e.id(), e));
    for (OutgoingEvent o : sent) {
      Event e = byId.get(o.id());
      assertThat(e).as("seed " + seed + ": event " + o.id()).isNotNull();
      assertThat(e.type()).as("type, seed " + seed).isEqualTo(o.type());
      assertThat(e.key()).as("key, seed " + seed).isEqualTo(o.key());
      assertThat(e.source()).as("source, seed " + seed).isEqualTo(o.source());
      assertThat(e.contentType()).as("content type, seed " + seed).isEqualTo(o.contentType());
      assertThat(e.headers()).as("headers, seed " + seed).isEqualTo(o.headers());
      assertThat(e.payload()).isEqualTo(o.payload());
    }
  }

  /**
   * Names that no subscription can have (NUL and control characters, SQL fragments, spaces,
   * over-long) are refused by every lookup with the naming rule, before any SQL runs.
   */
  @Test
  void lookupsRefuseImpossibleSubscriptionNames() {
    long seed = System.nanoTime();
    Random r = new Random(seed);
    for (int i = 0; i < 200; i++) {
      String name;
      switch (r.nextInt(5)) {
        case 0:
          name = "sub" + '\0' + i;
          break;
        case 1:
          name = "x'; DROP TABLE subscription; --" + i;
          break;
        case 2:
          name = "a\nb" + i;
          break;
        case 3:
          name = "s".repeat(Names.MAX_NAME_LENGTH + 1 + r.nextInt(10));
          break;
        default:
          name = unstorable(r, Field.KEY);
      }
      String n = name;
      List<ThrowingCallable> lookups =
          List.of(
              () -> boxline.consumer(n),
              () -> boxline.admin().subscription(n),
              () -> boxline.admin().lag(n),
              () -> boxline.admin().rewind(n, StartPosition.earliest()),
              () -> boxline.admin().groupPolicy(n),
              () -> boxline.deadLetters().list(DeadLetterQuery.of(n)));
      for (ThrowingCallable lookup : lookups) {
        assertThatThrownBy(lookup)
            .as("seed " + seed + ": " + n)
            .isInstanceOf(ValidationException.class)
            .hasMessageContaining("subscription name");
      }
    }
  }
}
