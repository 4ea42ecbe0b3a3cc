package io.boxline.spi;

import io.boxline.OutboxBacklog;
import io.boxline.PartitionLag;
import java.util.List;
import java.util.Map;

/** The store's role for observers: how far behind subscriptions and the sequencer are. */
public interface MonitoringStore {

  /** Each partition's head and cursor for the subscription. */
  List<PartitionLag> lag(long subscriptionId);

  /**
   * Like {@link #lag(long)}, with each partition's {@link PartitionLag#oldestUnhandledAt()} (one
   * index lookup per partition with a backlog).
   */
  List<PartitionLag> lagWithAge(long subscriptionId);

  /**
   * {@link #lagWithAge(long)} of every subscription in one statement, by subscription name (for
   * metrics collectors).
   */
  Map<String, List<PartitionLag>> lagBySubscription();

  /** How many rows wait in the outbox and when the oldest was written. */
  OutboxBacklog outboxBacklog();

  /** Counters of the store's own background work ({@link StoreStats#NONE} when it has none). */
  StoreStats stats();
}
