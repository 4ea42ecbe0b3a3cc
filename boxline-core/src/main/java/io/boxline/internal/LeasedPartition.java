package io.boxline.internal;

import io.boxline.TopicInfo;
import io.boxline.TopicPartition;
import io.boxline.spi.PartitionKey;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A partition a consumer holds a lease on, and what its worker knows of it: position, known head,
 * blocked keys, retry schedule. Only the worker that holds {@link #draining} changes the delivery
 * state.
 */
final class LeasedPartition {
  enum State {
    ACTIVE,
    RELEASING,
    RELEASED,
    LOST
  }

  final PartitionKey key;
  final TopicInfo topic;
  final long epoch;
  final AtomicLong knownLast = new AtomicLong();
  final AtomicBoolean draining = new AtomicBoolean();

  /** Whether it is in its consumer's queue of partitions that may have work (large consumers). */
  final AtomicBoolean queued = new AtomicBoolean();

  volatile long position;
  volatile State state = LeasedPartition.State.ACTIVE;
  volatile long lastActiveNanos = System.nanoTime();
  volatile boolean retryDue;

  /** Keys whose new events are parked behind earlier ones; only the draining worker touches it. */
  Set<String> blockedKeys = new HashSet<>();

  volatile boolean parkedLoaded;
  volatile long nextRetryAtMillis = Long.MAX_VALUE;

  /**
   * Sequences of events read from rows that cannot be delivered as they are, with the reason; every
   * attempt at them fails. An entry goes when its event is dead-lettered.
   */
  final Map<Long, String> malformed = new ConcurrentHashMap<>();

  long lastRetryPassNanos = System.nanoTime() - RetryPass.SPACING_NANOS;

  LeasedPartition(PartitionKey key, TopicInfo topic, long epoch, long position, long knownLast) {
    this.key = key;
    this.topic = topic;
    this.epoch = epoch;
    this.position = position;
    this.knownLast.set(knownLast);
  }

  TopicPartition ref() {
    return new TopicPartition(topic.name(), key.partition());
  }
}
