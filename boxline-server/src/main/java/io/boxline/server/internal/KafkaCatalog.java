package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the Kafka listener looks up on every request, kept between requests: topics and
 * subscriptions for a couple of seconds (as the HTTP API's members do), and each topic's heads
 * until its log grows, so that idle fetches, heartbeats and unchanged commits cost the database
 * nothing.
 */
final class KafkaCatalog {
  private static final long FRESH_NANOS = KnownSubscriptions.FRESH.toNanos();

  /** Heads are read again at least this often where the store does not hear every append. */
  private static final long HEADS_UNHEARD_NANOS = 500_000_000L;

  private final Boxline boxline;
  private final KnownSubscriptions subscriptions;

  private record Topic(Optional<TopicInfo> info, long at) {}

  private final Map<TopicName, Topic> topics = new ConcurrentHashMap<>();

  /** A topic's heads, valid until its log grows (then {@code grown} completes). */
  private record Heads(List<Long> heads, CompletableFuture<Void> grown, long readAt) {}

  private final Map<TopicName, Heads> heads = new ConcurrentHashMap<>();

  KafkaCatalog(Boxline boxline, KnownSubscriptions subscriptions) {
    this.boxline = boxline;
    this.subscriptions = subscriptions;
  }

  Optional<TopicInfo> topic(TopicName name) {
    long now = System.nanoTime();
    Topic known = topics.get(name);
    if (known != null && now - known.at() < FRESH_NANOS) {
      return known.info();
    }
    Optional<TopicInfo> found = boxline.admin().topic(name);
    topics.put(name, new Topic(found, now));
    return found;
  }

  Optional<SubscriptionInfo> subscription(String name) {
    return subscriptions.find(name);
  }

  /** A subscription created or changed here: its next lookup reads. */
  void forgetSubscription(String name) {
    subscriptions.forget(name);
  }

  /** The topic's heads, read again only when its log has grown since they were read. */
  List<Long> heads(TopicName topic) {
    Heads known = heads.get(topic);
    boolean fresh =
        known != null
            && !known.grown().isDone()
            && (boxline.remoteConsumers().hearsEveryAppend()
                || System.nanoTime() - known.readAt() < HEADS_UNHEARD_NANOS);
    return fresh ? known.heads() : freshHeads(topic);
  }

  /** The topic's heads as the database has them now. */
  List<Long> freshHeads(TopicName topic) {
    // Listen before reading, so a growth during the read is not missed.
    CompletableFuture<Void> grown =
        boxline.remoteConsumers().awaitAppend(topic, Duration.ofMinutes(5));
    List<Long> read = boxline.admin().topicState(topic).heads();
    Heads old = heads.put(topic, new Heads(read, grown, System.nanoTime()));
    if (old != null) {
      old.grown().cancel(false);
    }
    return read;
  }
}
