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
 * What the Kafka listener looks up on every request, kept between requests: topics for 30 s (2 s
 * when not found), subscriptions for a couple of seconds (as the HTTP API's members do), and each
 * topic's heads until its log grows, so that idle fetches, heartbeats and unchanged commits cost
 * the database nothing.
 */
final class KafkaCatalog {
  private static final long FRESH_NANOS = KnownSubscriptions.FRESH.toNanos();

  /**
   * A topic found is kept longer than one not found: topics seldom change, and an idle consumer's
   * fetches should not read the catalog every few seconds. Every read of the heads (after each
   * append) refreshes it as well, so a topic deleted and created again is noticed at its first
   * append; one deleted is noticed within this time.
   */
  static final Duration FOUND_FRESH = Duration.ofSeconds(30);

  private static final long FOUND_FRESH_NANOS = FOUND_FRESH.toNanos();

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
    if (known != null
        && now - known.at() < (known.info().isPresent() ? FOUND_FRESH_NANOS : FRESH_NANOS)) {
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
    io.boxline.TopicState state = boxline.admin().topicState(topic);
    List<Long> read = state.heads();
    long now = System.nanoTime();
    topics.put(topic, new Topic(Optional.of(state.topic()), now));
    Heads old = heads.put(topic, new Heads(read, grown, now));
    if (old != null) {
      old.grown().cancel(false);
    }
    return read;
  }
}
