package io.boxline.relay.testing;

import io.boxline.Boxline;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionLag;
import io.boxline.PublishResult;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.testkit.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * One relay test's world: its own database schema, a started Boxline, a topic and a subscription to
 * relay. Shared with the broker modules through the test jar.
 */
public final class RelayFixture implements AutoCloseable {
  public static final String TYPE = "relay.test";
  public static final String SUBSCRIPTION = "relay";

  private final TestDatabase db;
  private final Boxline boxline;
  private final TopicName topic;

  private RelayFixture(String hint, int partitions, UnaryOperator<Boxline.Builder> customize) {
    this.db = TestDatabase.create(hint);
    try {
      this.boxline = db.boxline(customize);
      this.topic = TopicName.of("relay/test", "events");
      boxline.admin().createNamespace(NamespacePath.of("relay/test"));
      boxline.admin().createTopic(topic, partitions);
      boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, topic));
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
  }

  /** A fresh schema with a topic of {@code partitions} partitions and the subscription "relay". */
  public static RelayFixture create(String hint, int partitions) {
    return new RelayFixture(hint, partitions, b -> b);
  }

  /** Like {@link #create(String, int)}, with Boxline built through {@code customize}. */
  public static RelayFixture create(
      String hint, int partitions, UnaryOperator<Boxline.Builder> customize) {
    return new RelayFixture(hint, partitions, customize);
  }

  public Boxline boxline() {
    return boxline;
  }

  public TopicName topic() {
    return topic;
  }

  /** The key of the {@code n}-th event of a workload over {@code keys} keys. */
  public static String key(long n, int keys) {
    return String.format("key-%03d", n % keys);
  }

  /** The JSON payload of the {@code n}-th event. */
  public static byte[] payload(String key, long n) {
    return ("{\"key\":\"" + key + "\",\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Publishes {@code count} JSON events over {@code keys} keys, {@code perTx} per transaction (one
   * transaction after the other, so per key the sequence follows {@code n}). Every tenth carries a
   * W3C traceparent header. Returns the ids in publish order.
   */
  public List<UUID> publish(int count, int keys, int perTx) {
    return publish(0, count, keys, perTx);
  }

  /** Like {@link #publish(int, int, int)}, numbering events from {@code first}. */
  public List<UUID> publish(long first, int count, int keys, int perTx) {
    List<UUID> ids = new ArrayList<>(count);
    for (long start = first; start < first + count; start += perTx) {
      List<OutgoingEvent> batch = new ArrayList<>();
      for (long n = start; n < Math.min(first + count, start + perTx); n++) {
        String key = key(n, keys);
        OutgoingEvent.Builder b =
            OutgoingEvent.builder(topic)
                .type(TYPE)
                .key(key)
                .contentType("application/json")
                .payload(payload(key, n));
        if (n % 10 == 0) {
          b.header("traceparent", traceparent(n));
        }
        batch.add(b.build());
      }
      ids.addAll(publishAll(batch));
    }
    return ids;
  }

  /** Publishes one event with the given key, payload and headers in its own transaction. */
  public UUID publishOne(String key, byte[] payload, Map<String, String> headers) {
    OutgoingEvent e =
        OutgoingEvent.builder(topic)
            .type(TYPE)
            .key(key)
            .contentType("application/json")
            .payload(payload)
            .headers(headers)
            .build();
    return publishAll(List.of(e)).get(0);
  }

  private List<UUID> publishAll(List<OutgoingEvent> batch) {
    List<PublishResult> results =
        boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
    List<UUID> ids = new ArrayList<>(results.size());
    for (PublishResult r : results) {
      ids.add(r.eventId());
    }
    return ids;
  }

  /** A valid W3C traceparent derived from {@code n}. */
  public static String traceparent(long n) {
    return String.format("00-%032x-%016x-01", n + 1, n + 1);
  }

  /** Dead letters of the relay subscription. */
  public List<DeadLetter> deadLetters() {
    return boxline.deadLetters().list(DeadLetterQuery.of(SUBSCRIPTION).limit(100_000));
  }

  /**
   * Events of the relay subscription not yet past its cursor, counting those still waiting for the
   * sequencer (the lag alone reads 0 for events published but not yet in the log).
   */
  public long backlog() {
    long sum = boxline.admin().outboxBacklog().events();
    for (PartitionLag lag : boxline.admin().lag(SUBSCRIPTION)) {
      sum += lag.backlog();
    }
    return sum;
  }

  @Override
  public void close() {
    db.close();
  }
}
