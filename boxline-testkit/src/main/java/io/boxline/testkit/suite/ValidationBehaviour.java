package io.boxline.testkit.suite;

import static io.boxline.testkit.suite.SuiteSupport.raw;
import static io.boxline.testkit.suite.SuiteSupport.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.ConnectionStateException;
import io.boxline.EventTypes;
import io.boxline.NotFoundException;
import io.boxline.OutgoingEvent;
import io.boxline.PayloadTooLargeException;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
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
}
