package io.boxline.internal;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.EventTypes;
import io.boxline.Partitioner;
import io.boxline.PublishInterceptor;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Validated settings of a {@link Boxline}, built by {@link Boxline.Builder}: the one door into the
 * engine ({@code DefaultBoxline} is not public). Internal: other modules use {@link
 * Boxline#builder()}.
 */
public record BoxlineSettings(
    Store store,
    CoordinationStore coordination,
    EventTypes eventTypes,
    Partitioner partitioner,
    String instanceId,
    int maxPayloadBytes,
    boolean sequencer,
    int sequencerBatchSize,
    Duration sequencerLease,
    Duration sequencerIdlePoll,
    Duration sequencerBatchSpacing,
    Duration producerNotifyInterval,
    Duration retentionInterval,
    Duration inboxRetention,
    Duration deadLetterRetention,
    Duration idempotencyRetention,
    boolean migrate,
    Clock clock,
    List<BoxlineObserver> observers,
    List<PublishInterceptor> interceptors,
    io.boxline.TaskSettings tasks,
    java.util.Map<String, io.boxline.MemberPolicy> memberPolicies) {

  /** A new, not yet started instance with these settings. */
  public Boxline newInstance() {
    return new DefaultBoxline(this);
  }
}
