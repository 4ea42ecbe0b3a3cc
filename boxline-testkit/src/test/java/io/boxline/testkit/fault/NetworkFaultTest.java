package io.boxline.testkit.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.net.FaultProxy;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Faults of the network between Boxline and PostgreSQL, through a {@link FaultProxy} on real
 * sockets: a commit whose answer is lost, a member cut off (blackholed) for longer than its group
 * deadline, every connection reset in mid-traffic, and a slow link. After each: nothing lost, per
 * key order, no stale member moving a cursor, duplicates only of in-flight batches.
 */
class NetworkFaultTest {
  private static final GroupPolicy POLICY =
      GroupPolicy.DEFAULT
          .withMinCheckInInterval(Duration.ofMillis(200))
          .withDeadlineMultiplier(5)
          .withReleaseGrace(Duration.ofSeconds(2))
          .withIdleRelease(Duration.ofSeconds(120));

  private TestDatabase db;
  private FaultProxy proxy;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void setUp() {
    db = TestDatabase.create("netfault");
    URI target = URI.create(db.server().url().substring("jdbc:".length()));
    proxy = FaultProxy.start(target.getHost(), target.getPort() < 0 ? 5432 : target.getPort());
  }

  @AfterEach
  void tearDown() throws Exception {
    proxy.heal();
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    proxy.close();
    db.close();
  }

  /** A pool whose connections go through the proxy. */
  private HikariDataSource poolThroughProxy(String name) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(proxy.jdbcUrlThrough(db.server().url()));
    c.setUsername(db.server().user());
    c.setPassword(db.server().password());
    c.setPoolName(name);
    c.setMaximumPoolSize(8);
    c.setConnectionTimeout(5_000);
    HikariDataSource ds = new HikariDataSource(c);
    closing.add(ds);
    return ds;
  }

  private Boxline boxlineThroughProxy(String instance, boolean sequencer) {
    Boxline b =
        Boxline.builder()
            .store(JdbcStore.builder(poolThroughProxy(instance)).schema(db.schema()).build())
            .instanceId(instance)
            .sequencer(sequencer)
            .build()
            .start();
    closing.add(b);
    return b;
  }

  private TopicName topic(Boxline admin, String name, int partitions, String subscription) {
    TopicName t = TopicName.of("net/fault", name);
    admin.admin().createNamespace(NamespacePath.of("net/fault"));
    admin.admin().createTopic(t, partitions);
    admin.admin().createSubscription(SubscriptionSpec.of(subscription, t));
    admin.admin().setDefaultGroupPolicy(POLICY);
    return t;
  }

  private long count(String sql, Object... args) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * The recipe for a commit of unknown outcome: publish again with the same idempotency key. When
   * the first commit took effect the second stores nothing; when it did not, the second stores the
   * event. Either way the event is there once.
   */
  @Test
  @Timeout(60)
  void aCommitWhoseAnswerIsLostIsStoredOnceWhenRetriedWithItsIdempotencyKey() throws Exception {
    Boxline direct = db.boxline(b -> b.instanceId("direct").sequencer(false));
    TopicName t = topic(direct, "orders", 2, "unused");
    Boxline app = boxlineThroughProxy("app", false);
    OutgoingEvent event =
        OutgoingEvent.builder(t)
            .type("order.placed")
            .key("order-42")
            .payload("{}".getBytes(StandardCharsets.UTF_8))
            .idempotencyKey("order-42-placed")
            .build();

    proxy.resetAfterReplyTo("COMMIT");
    assertThatThrownBy(() -> app.inTransaction(tx -> app.publisher().publish(tx, event)))
        .as("the commit's answer never arrives");
    assertThat(proxy.resets()).isEqualTo(1);
    PublishResult retried = app.inTransaction(tx -> app.publisher().publish(tx, event));
    assertThat(retried.duplicate()).as("the first commit took effect").isTrue();
    assertThat(
            count(
                "SELECT count(*) FROM " + db.table("outbox") + " WHERE event_id = ?",
                retried.eventId()))
        .as("the event, once")
        .isEqualTo(1);
    assertThat(count("SELECT count(*) FROM " + db.table("outbox"))).isEqualTo(1);
  }
}
