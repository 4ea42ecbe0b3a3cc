package io.boxline.internal;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.ConsumerHooks;
import io.boxline.Event;
import io.boxline.PartitionListener;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * The registered {@link BoxlineObserver}s as one: calls each in turn, logs and ignores what they
 * throw. Call sites check {@link #active()} before computing arguments, so an instance without
 * observers allocates nothing for them.
 */
final class Observers implements BoxlineObserver {
  private static final System.Logger LOG = System.getLogger(Observers.class.getName());

  static final Observers NONE = new Observers(List.of());

  private final BoxlineObserver[] all;

  private Observers(List<BoxlineObserver> observers) {
    this.all = observers.toArray(new BoxlineObserver[0]);
  }

  static Observers of(List<BoxlineObserver> observers) {
    return observers.isEmpty() ? NONE : new Observers(observers);
  }

  boolean active() {
    return all.length > 0;
  }

  private static void failed(BoxlineObserver o, String call, RuntimeException e) {
    LOG.log(Level.WARNING, "observer " + o.getClass().getName() + " failed in " + call, e);
  }

  @Override
  public void started(Boxline boxline) {
    for (BoxlineObserver o : all) {
      try {
        o.started(boxline);
      } catch (RuntimeException e) {
        failed(o, "started", e);
      }
    }
  }

  @Override
  public void closing(Boxline boxline) {
    for (BoxlineObserver o : all) {
      try {
        o.closing(boxline);
      } catch (RuntimeException e) {
        failed(o, "closing", e);
      }
    }
  }

  @Override
  public void published(TopicName topic, int events) {
    for (BoxlineObserver o : all) {
      try {
        o.published(topic, events);
      } catch (RuntimeException e) {
        failed(o, "published", e);
      }
    }
  }

  @Override
  public void sequenced(int events, Duration took) {
    for (BoxlineObserver o : all) {
      try {
        o.sequenced(events, took);
      } catch (RuntimeException e) {
        failed(o, "sequenced", e);
      }
    }
  }

  @Override
  public void handled(String subscription, Event event, Duration took) {
    for (BoxlineObserver o : all) {
      try {
        o.handled(subscription, event, took);
      } catch (RuntimeException e) {
        failed(o, "handled", e);
      }
    }
  }

  @Override
  public void failed(String subscription, Event event, Throwable error, int attempt) {
    for (BoxlineObserver o : all) {
      try {
        o.failed(subscription, event, error, attempt);
      } catch (RuntimeException e) {
        failed(o, "failed", e);
      }
    }
  }

  @Override
  public void retrying(String subscription, Event event, int attempt, Instant nextAttemptAt) {
    for (BoxlineObserver o : all) {
      try {
        o.retrying(subscription, event, attempt, nextAttemptAt);
      } catch (RuntimeException e) {
        failed(o, "retrying", e);
      }
    }
  }

  @Override
  public void deadLettered(String subscription, Event event, String reason) {
    for (BoxlineObserver o : all) {
      try {
        o.deadLettered(subscription, event, reason);
      } catch (RuntimeException e) {
        failed(o, "deadLettered", e);
      }
    }
  }

  @Override
  public void malformed(String subscription, Event event, String reason) {
    for (BoxlineObserver o : all) {
      try {
        o.malformed(subscription, event, reason);
      } catch (RuntimeException e) {
        failed(o, "malformed", e);
      }
    }
  }

  @Override
  public void partitionsAssigned(
      String subscription, String consumerId, Set<TopicPartition> partitions) {
    for (BoxlineObserver o : all) {
      try {
        o.partitionsAssigned(subscription, consumerId, partitions);
      } catch (RuntimeException e) {
        failed(o, "partitionsAssigned", e);
      }
    }
  }

  @Override
  public void partitionsRevoked(
      String subscription, String consumerId, Set<TopicPartition> partitions) {
    for (BoxlineObserver o : all) {
      try {
        o.partitionsRevoked(subscription, consumerId, partitions);
      } catch (RuntimeException e) {
        failed(o, "partitionsRevoked", e);
      }
    }
  }

  @Override
  public void partitionsLost(
      String subscription, String consumerId, Set<TopicPartition> partitions) {
    for (BoxlineObserver o : all) {
      try {
        o.partitionsLost(subscription, consumerId, partitions);
      } catch (RuntimeException e) {
        failed(o, "partitionsLost", e);
      }
    }
  }

  @Override
  public void sinkDelivered(
      String sink, TopicName topic, int events, Duration took, Throwable error) {
    for (BoxlineObserver o : all) {
      try {
        o.sinkDelivered(sink, topic, events, took, error);
      } catch (RuntimeException e) {
        failed(o, "sinkDelivered", e);
      }
    }
  }

  /**
   * The consumer's hooks with the observers behind them: the engine already calls hooks around
   * every attempt, so handled, failed and dead-lettered events reach the observers through them.
   */
  ConsumerHooks hooks(String subscription, ConsumerHooks user) {
    if (!active()) {
      return user;
    }
    return new ConsumerHooks() {
      @Override
      public void beforeEvent(Event event, int attempt) {
        user.beforeEvent(event, attempt);
      }

      @Override
      public void afterEvent(Event event, Duration took) {
        try {
          user.afterEvent(event, took);
        } finally {
          handled(subscription, event, took);
        }
      }

      @Override
      public void onError(Event event, RuntimeException error, int attempt) {
        try {
          user.onError(event, error, attempt);
        } finally {
          failed(subscription, event, error, attempt);
        }
      }

      @Override
      public void onDeadLetter(Event event, String reason) {
        try {
          user.onDeadLetter(event, reason);
        } finally {
          deadLettered(subscription, event, reason);
        }
      }

      @Override
      public void onWorkerError(Throwable error) {
        user.onWorkerError(error);
      }
    };
  }

  /** The consumer's partition listener with the observers behind it. */
  PartitionListener listener(String subscription, String consumerId, PartitionListener user) {
    if (!active()) {
      return user;
    }
    return new PartitionListener() {
      @Override
      public void onAssigned(Set<TopicPartition> partitions) {
        try {
          user.onAssigned(partitions);
        } finally {
          partitionsAssigned(subscription, consumerId, partitions);
        }
      }

      @Override
      public void onRevoked(Set<TopicPartition> partitions) {
        try {
          user.onRevoked(partitions);
        } finally {
          partitionsRevoked(subscription, consumerId, partitions);
        }
      }

      @Override
      public void onLost(Set<TopicPartition> partitions) {
        try {
          user.onLost(partitions);
        } finally {
          partitionsLost(subscription, consumerId, partitions);
        }
      }
    };
  }
}
