package io.boxline.kafka.internal;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.TopicInfo;
import io.boxline.ValidationException;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.SinkException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** Produces batches of events and classifies what the producer reports. */
public final class KafkaDelivery {
  private static final System.Logger LOG = System.getLogger(KafkaDelivery.class.getName());

  private final Map<String, Object> settings;
  private final Function<Event, String> topic;
  private final Boxline boxline;
  private final CloudEventsMapping mapping;
  private final Duration closeTimeout;
  private final Map<String, Boolean> samePartitions = new ConcurrentHashMap<>();
  private volatile Producer<byte[], byte[]> producer;
  private volatile boolean closed;

  public KafkaDelivery(
      Map<String, Object> settings,
      Function<Event, String> topic,
      Boxline boxline,
      CloudEventsMapping mapping,
      Duration closeTimeout) {
    this.settings = Map.copyOf(settings);
    this.topic = topic;
    this.boxline = boxline;
    this.mapping = mapping;
    this.closeTimeout = closeTimeout;
    this.producer = newProducer();
  }

  private Producer<byte[], byte[]> newProducer() {
    try {
      return new KafkaProducer<>(settings);
    } catch (ConfigException e) {
      throw new ValidationException("Kafka producer settings are invalid: " + e.getMessage());
    }
  }

  public void send(List<Event> events) {
    if (closed) {
      throw SinkException.retryable(events, "the Kafka sink is closed", null);
    }
    Producer<byte[], byte[]> p = producer;
    List<Future<RecordMetadata>> futures = new ArrayList<>(events.size());
    SinkException.Builder failures = SinkException.builder();
    int stopAt = events.size(); // index of the first retryable failure
    String stopReason = null;
    for (int i = 0; i < events.size(); i++) {
      Event e = events.get(i);
      ProducerRecord<byte[], byte[]> record;
      try {
        record = record(e, p);
      } catch (KafkaException ex) {
        // partition lookup: metadata not available in time, or the topic does not exist (yet)
        stopAt = i;
        stopReason = "cannot look up the Kafka topic: " + ex;
        failures.cause(ex);
        break;
      } catch (RuntimeException ex) {
        futures.add(null);
        failures.permanent(e, "cannot map the event to a Kafka record: " + ex).cause(ex);
        continue;
      }
      try {
        futures.add(p.send(record));
      } catch (RuntimeException ex) {
        if (isPermanent(ex)) {
          futures.add(null);
          failures.permanent(e, describe(ex)).cause(ex);
          continue;
        }
        stopAt = i;
        stopReason = describe(ex);
        failures.cause(ex);
        replaceIfFatal(p, ex);
        break;
      }
    }
    // Wait for every record handed to the producer, whatever happened, so the report is complete.
    boolean interrupted = false;
    for (int i = 0; i < futures.size(); i++) {
      Future<RecordMetadata> f = futures.get(i);
      if (f == null) {
        continue;
      }
      try {
        if (interrupted) {
          if (!f.isDone()) {
            stopAt = Math.min(stopAt, i);
            continue;
          }
        }
        f.get();
      } catch (InterruptedException ex) {
        interrupted = true;
        if (i < stopAt) {
          stopAt = i;
          stopReason = "interrupted while waiting for Kafka acknowledgements";
        }
      } catch (ExecutionException ex) {
        Throwable cause = ex.getCause() == null ? ex : ex.getCause();
        if (i < stopAt && isPermanent(cause)) {
          failures.permanent(events.get(i), describe(cause)).cause(cause);
        } else if (i < stopAt) {
          stopAt = i;
          stopReason = describe(cause);
          failures.cause(cause);
          replaceIfFatal(p, cause);
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    if (stopAt < events.size()) {
      failures.retryable(events.get(stopAt), stopReason);
      failures.retryable(
          events.subList(stopAt + 1, events.size()),
          "produced again after an earlier record of the batch failed (" + stopReason + ")");
    }
    if (!failures.isEmpty()) {
      throw failures.build();
    }
  }

  private ProducerRecord<byte[], byte[]> record(Event e, Producer<byte[], byte[]> p) {
    String kafkaTopic = topic.apply(e);
    if (kafkaTopic == null || kafkaTopic.isBlank()) {
      throw new IllegalArgumentException("the topic function returned no topic for " + e);
    }
    Integer partition = samePartition(e, kafkaTopic, p) ? e.partition() : null;
    byte[] key = e.key() == null ? null : e.key().getBytes(StandardCharsets.UTF_8);
    RecordHeaders headers = new RecordHeaders();
    byte[] value;
    if (mapping.mode() == CloudEventsMapping.Mode.STRUCTURED) {
      value = mapping.toJson(e);
      headers.add("content-type", bytes(CloudEventsMapping.JSON_CONTENT_TYPE));
    } else {
      value = e.payload();
      mapping.binaryAttributes(e).forEach((name, v) -> headers.add("ce_" + name, bytes(v)));
      if (e.contentType() != null) {
        headers.add("content-type", bytes(e.contentType()));
      }
    }
    return new ProducerRecord<>(kafkaTopic, partition, null, key, value, headers);
  }

  /** Whether the Kafka topic has as many partitions as the Boxline topic (decided once). */
  private boolean samePartition(Event e, String kafkaTopic, Producer<byte[], byte[]> p) {
    if (boxline == null) {
      return false;
    }
    String cacheKey = e.topic() + " -> " + kafkaTopic;
    Boolean same = samePartitions.get(cacheKey);
    if (same == null) {
      Optional<Integer> boxlineCount = boxline.admin().topic(e.topic()).map(TopicInfo::partitions);
      int kafkaCount = p.partitionsFor(kafkaTopic).size(); // waits for metadata (max.block.ms)
      same = boxlineCount.isPresent() && boxlineCount.get() == kafkaCount;
      LOG.log(
          Level.INFO,
          "kafka sink: {0} has {1} partitions, Kafka topic {2} has {3}: {4}",
          e.topic(),
          boxlineCount.map(String::valueOf).orElse("?"),
          kafkaTopic,
          kafkaCount,
          same ? "records keep their Boxline partition" : "Kafka's partitioner picks from the key");
      samePartitions.putIfAbsent(cacheKey, same);
    }
    return same;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Records Kafka can never accept, however often they are sent. */
  private static boolean isPermanent(Throwable t) {
    return t instanceof RecordTooLargeException
        || t instanceof RecordBatchTooLargeException
        || t instanceof InvalidRecordException
        || t instanceof SerializationException;
  }

  private static String describe(Throwable t) {
    String m = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    return m.length() > 1000 ? m.substring(0, 1000) : m;
  }

  /** After a fatal producer error, swaps in a new producer (once per failed instance). */
  private void replaceIfFatal(Producer<byte[], byte[]> failed, Throwable t) {
    boolean fatal =
        t instanceof IllegalStateException
            || t instanceof OutOfOrderSequenceException
            || t instanceof ProducerFencedException
            || t instanceof InvalidProducerEpochException
            || t instanceof UnknownProducerIdException
            || t instanceof ClusterAuthorizationException;
    if (!fatal || closed) {
      return;
    }
    synchronized (this) {
      if (producer != failed || closed) {
        return;
      }
      LOG.log(Level.WARNING, "kafka sink: replacing the producer after a fatal error: {0}", t);
      producer = newProducer();
    }
    try {
      failed.close(Duration.ZERO);
    } catch (RuntimeException e) {
      LOG.log(Level.DEBUG, "kafka sink: closing the failed producer: {0}", e);
    }
  }

  public void close() {
    Producer<byte[], byte[]> p;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      p = producer;
    }
    p.close(closeTimeout);
  }
}
