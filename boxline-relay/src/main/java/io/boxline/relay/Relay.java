package io.boxline.relay;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerBuilder;
import io.boxline.RetryPolicy;
import io.boxline.ValidationException;
import io.boxline.relay.internal.RelayHandler;
import java.time.Duration;
import java.util.Objects;

/**
 * Delivers the events of a Boxline subscription to a {@link Sink}: relay = subscription + sink.
 *
 * <pre>{@code
 * boxline.admin().createSubscription(SubscriptionSpec.of("orders-to-kafka", orders));
 * Relay relay = Relay.builder(boxline)
 *     .subscription("orders-to-kafka")
 *     .sink(KafkaSink.builder().bootstrapServers("kafka:9092").topic(t -> "orders").build())
 *     .start();
 * ...
 * relay.close();
 * }</pre>
 *
 * <p>The relay is a Boxline consumer whose batch handler calls {@link Sink#send}. Its cursor moves
 * past a batch only after the sink confirmed it, so delivery is at least once and in order per key
 * (same key, same partition, one batch at a time). When the sink reports a {@linkplain
 * SinkException.Kind#RETRYABLE retryable} failure, the relay keeps the batch and sends the
 * unconfirmed events again with exponential backoff ({@link Builder#retryBackoff}): a broker outage
 * stalls the affected partitions and nothing is lost. {@linkplain SinkException.Kind#PERMANENT
 * Permanent} failures become dead letters of the subscription ({@link Boxline#deadLetters()}) and
 * the partition moves on. Run several relays on the same subscription (in one or several processes)
 * and Boxline's consumer group shares the partitions among them.
 *
 * <p>Every send is reported to the observers of the Boxline instance ({@link
 * io.boxline.BoxlineObserver#sinkDelivered}, through {@link Boxline#observer()}), so a registered
 * {@code BoxlineMetrics} times the sink and counts what it confirmed and what failed.
 */
public final class Relay implements AutoCloseable {
  /** Default first pause before a retryable failure is sent again. */
  public static final Duration DEFAULT_RETRY_INITIAL_BACKOFF = Duration.ofMillis(100);

  /** Default longest pause between two sends of a retryable failure. */
  public static final Duration DEFAULT_RETRY_MAX_BACKOFF = Duration.ofSeconds(10);

  private final Consumer consumer;
  private final RelayHandler handler;
  private final Sink sink;
  private final boolean closeSink;
  private final Duration shutdownTimeout;
  private final String subscription;
  private boolean closed;

  private Relay(Builder b, Consumer consumer, RelayHandler handler) {
    this.consumer = consumer;
    this.handler = handler;
    this.sink = b.sink;
    this.closeSink = b.closeSink;
    this.shutdownTimeout = b.shutdownTimeout;
    this.subscription = b.subscription;
  }

  /** Starts configuring a relay on {@code boxline} (which must be started). */
  public static Builder builder(Boxline boxline) {
    return new Builder(Objects.requireNonNull(boxline, "boxline"));
  }

  /** The subscription this relay reads. */
  public String subscription() {
    return subscription;
  }

  /** The underlying Boxline consumer (member id, assigned partitions, counters). */
  public Consumer consumer() {
    return consumer;
  }

  /** Events the sink confirmed since start (a resent event counts once per confirmation). */
  public long sentCount() {
    return handler.sent();
  }

  /** Events the sink rejected for good and the relay dead-lettered. */
  public long deadLetterCount() {
    return handler.deadLettered();
  }

  /** Sends repeated after a retryable failure (one per batch resend). */
  public long retryCount() {
    return handler.retries();
  }

  /**
   * True while some partition waits for the sink to recover from a retryable failure (the relay is
   * backing off and resending).
   */
  public boolean isStalled() {
    return handler.stalled() > 0;
  }

  /**
   * Stops: wakes partitions that wait out a retry backoff, stops the consumer (in-flight batches
   * get the shutdown timeout to finish; their cursors do not move past anything unconfirmed), then
   * closes the sink. Safe to call twice.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    handler.close();
    try {
      consumer.stop(shutdownTimeout);
    } finally {
      if (closeSink) {
        sink.close();
      }
    }
  }

  /** Settings of a {@link Relay}; {@link #start()} validates them and starts it. */
  public static final class Builder {
    private final Boxline boxline;
    private String subscription;
    private Sink sink;
    private int batchSize = ConsumerBuilder.DEFAULT_BATCH_SIZE;
    private int concurrency = ConsumerBuilder.DEFAULT_CONCURRENCY;
    private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
    private Duration retryInitialBackoff = DEFAULT_RETRY_INITIAL_BACKOFF;
    private Duration retryMaxBackoff = DEFAULT_RETRY_MAX_BACKOFF;
    private Duration stallTimeout;
    private Duration shutdownTimeout = ConsumerBuilder.DEFAULT_SHUTDOWN_TIMEOUT;
    private String consumerId;
    private boolean closeSink = true;

    private Builder(Boxline boxline) {
      this.boxline = boxline;
    }

    /** The subscription to relay (required; create it first with {@code admin()}). */
    public Builder subscription(String subscription) {
      this.subscription = subscription;
      return this;
    }

    /** Where events go (required). Closed by {@link Relay#close()} unless told otherwise. */
    public Builder sink(Sink sink) {
      this.sink = sink;
      return this;
    }

    /**
     * Events per batch handed to {@link Sink#send}, 1 to 10,000 (default 100). Larger batches mean
     * fewer broker round trips and more events sent again after a crash.
     */
    public Builder batchSize(int batchSize) {
      this.batchSize = batchSize;
      return this;
    }

    /** Partitions relayed in parallel, 1 to 256 (default 4). Each partition stays in order. */
    public Builder concurrency(int concurrency) {
      this.concurrency = concurrency;
      return this;
    }

    /**
     * Boxline's retry policy for the events the relay hands back to it: those that still failed
     * after {@link #stallTimeout} and those whose send threw something other than a {@link
     * SinkException} (default {@link RetryPolicy#DEFAULT}: retried with backoff, dead-lettered
     * after 10 attempts).
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = policy;
      return this;
    }

    /**
     * Backoff between sends of events that failed retryably: {@code initial} after a failure,
     * doubling up to {@code max} while resends make no progress at all, back to {@code initial}
     * after a resend that got some events through (defaults 100 ms and 10 s; each at least 1 ms, at
     * most 1 hour, max not shorter than initial).
     */
    public Builder retryBackoff(Duration initial, Duration max) {
      this.retryInitialBackoff = initial;
      this.retryMaxBackoff = max;
      return this;
    }

    /**
     * How long a partition may wait for retryable failures to clear before the relay gives the
     * events back to Boxline's {@link #retryPolicy} (which parks them so other keys move on, and
     * dead-letters them after its attempts). Default: no limit — an outage stalls the partition
     * until the sink recovers or the relay is closed, and nothing becomes a dead letter because of
     * it; {@code null} restores that. At least 1 ms.
     */
    public Builder stallTimeout(Duration timeout) {
      this.stallTimeout = timeout;
      return this;
    }

    /** Bounded wait for in-flight batches on close (default 10 s, 0 to 10 min). */
    public Builder shutdownTimeout(Duration timeout) {
      this.shutdownTimeout = timeout;
      return this;
    }

    /** Member id in the subscription's consumer group (default: chosen by Boxline). */
    public Builder consumerId(String id) {
      this.consumerId = id;
      return this;
    }

    /** Whether {@link Relay#close()} closes the sink too (default true). */
    public Builder closeSinkOnClose(boolean close) {
      this.closeSink = close;
      return this;
    }

    /**
     * Validates the settings and starts relaying.
     *
     * @throws ValidationException for a missing or out-of-range setting or an unknown subscription
     */
    public Relay start() {
      if (subscription == null || subscription.isBlank()) {
        throw new ValidationException(
            "Relay.builder(boxline) needs a subscription: .subscription(\"orders-to-kafka\")");
      }
      if (sink == null) {
        throw new ValidationException(
            "Relay.builder(boxline) needs a sink: .sink(...), e.g. a KafkaSink, RabbitMqSink,"
                + " NatsSink or WebhookSink");
      }
      requireRange("batchSize", batchSize, 1, 10_000);
      requireRange("concurrency", concurrency, 1, 256);
      if (retryPolicy == null) {
        throw new ValidationException("retryPolicy must not be null");
      }
      requireRange(
          "retryBackoff initial", retryInitialBackoff, Duration.ofMillis(1), Duration.ofHours(1));
      requireRange("retryBackoff max", retryMaxBackoff, Duration.ofMillis(1), Duration.ofHours(1));
      if (retryMaxBackoff.compareTo(retryInitialBackoff) < 0) {
        throw new ValidationException(
            "retryBackoff max ("
                + retryMaxBackoff
                + ") must not be shorter than initial ("
                + retryInitialBackoff
                + ")");
      }
      if (stallTimeout != null) {
        requireRange("stallTimeout", stallTimeout, Duration.ofMillis(1), Duration.ofDays(3653));
      }
      requireRange("shutdownTimeout", shutdownTimeout, Duration.ZERO, Duration.ofMinutes(10));
      if (boxline.admin().subscription(subscription).isEmpty()) {
        throw new ValidationException(
            "subscription '"
                + subscription
                + "' does not exist; create it first:"
                + " boxline.admin().createSubscription(SubscriptionSpec.of(\""
                + subscription
                + "\", topic))");
      }
      RelayHandler handler =
          new RelayHandler(
              sink,
              retryInitialBackoff,
              retryMaxBackoff,
              stallTimeout,
              subscription,
              boxline.observer());
      ConsumerBuilder cb =
          boxline
              .consumer(subscription)
              .batchHandler(handler)
              .batchSize(batchSize)
              .concurrency(concurrency)
              .retryPolicy(retryPolicy)
              .shutdownTimeout(shutdownTimeout);
      if (consumerId != null) {
        cb.id(consumerId);
      }
      return new Relay(this, cb.start(), handler);
    }

    private static void requireRange(String name, int value, int min, int max) {
      if (value < min || value > max) {
        throw new ValidationException(
            name + " must be between " + min + " and " + max + ", got " + value);
      }
    }

    private static void requireRange(String name, Duration value, Duration min, Duration max) {
      if (value == null) {
        throw new ValidationException(name + " must not be null");
      }
      if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
        throw new ValidationException(
            name + " must be between " + min + " and " + max + ", got " + value);
      }
    }
  }
}
