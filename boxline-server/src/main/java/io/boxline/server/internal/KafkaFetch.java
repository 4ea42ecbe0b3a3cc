package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.TopicName;
import io.boxline.server.internal.Auth.Action;
import io.boxline.server.internal.KafkaApis.Found;
import io.boxline.server.internal.KafkaApis.Refused;
import io.boxline.server.internal.KafkaApis.Resolved;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * Fetch: reads each partition after the fetch offset (offset o is sequence o + 1) and answers with
 * record batches; when there is nothing to read it waits, holding no thread, until a log of the
 * fetched topics grows or {@code max.wait.ms} passes. The partitions' heads are kept between
 * fetches and read again only after a log grew, so an idle consumer's fetches cost the database
 * nothing.
 */
final class KafkaFetch {
  /** The longest wait a fetch may ask for. */
  static final int MAX_WAIT_MILLIS = 30_000;

  /** Events read from one partition for one fetch at most. */
  private static final int MAX_EVENTS = 1000;

  /** The event type a record without a {@code ce_type} header gets, and loses again on fetch. */
  static final String DEFAULT_TYPE = "kafka.record";

  static final String DEFAULT_CONTENT_TYPE = "application/octet-stream";

  private final Boxline boxline;
  private final KafkaApis apis;
  private final Set<CompletableFuture<Void>> waiting = ConcurrentHashMap.newKeySet();

  /** Each topic's heads, valid until its log grows (then {@code grown} completes). */
  private record Heads(List<Long> heads, CompletableFuture<Void> grown, long readAt) {}

  private final Map<TopicName, Heads> heads = new ConcurrentHashMap<>();

  private final java.util.concurrent.Executor executor;

  KafkaFetch(Boxline boxline, KafkaApis apis, java.util.concurrent.Executor executor) {
    this.executor = executor;
    this.boxline = boxline;
    this.apis = apis;
  }

  /** Ends every wait (the server stops). */
  void wakeAll() {
    waiting.forEach(w -> w.complete(null));
  }

  private record Wanted(
      String kafkaName, Resolved topic, FetchRequestData.FetchPartition partition) {}

  CompletableFuture<ApiMessage> handle(KafkaConnection c, AbstractRequest request) {
    c.caller.require(Action.CONSUME);
    FetchRequestData r = (FetchRequestData) request.data();
    List<Wanted> wanted = new ArrayList<>();
    Map<String, Resolved> resolved = new HashMap<>();
    for (FetchRequestData.FetchTopic t : r.topics()) {
      Resolved topic = resolved.computeIfAbsent(t.topic(), n -> apis.resolve(c.caller, n));
      for (FetchRequestData.FetchPartition p : t.partitions()) {
        wanted.add(new Wanted(t.topic(), topic, p));
      }
    }
    long deadline =
        System.nanoTime() + Math.min(Math.max(0, r.maxWaitMs()), MAX_WAIT_MILLIS) * 1_000_000L;
    return attempt(wanted, r, deadline);
  }

  private CompletableFuture<ApiMessage> attempt(
      List<Wanted> wanted, FetchRequestData r, long deadline) {
    Map<String, FetchResponseData.FetchableTopicResponse> byTopic = new java.util.LinkedHashMap<>();
    int bytes = 0;
    Set<TopicName> topics = new LinkedHashSet<>();
    for (Wanted w : wanted) {
      FetchResponseData.PartitionData out =
          new FetchResponseData.PartitionData()
              .setPartitionIndex(w.partition().partition())
              .setHighWatermark(-1)
              .setLastStableOffset(-1)
              .setLogStartOffset(-1)
              .setRecords(MemoryRecords.EMPTY);
      byTopic
          .computeIfAbsent(
              w.kafkaName(),
              n ->
                  new FetchResponseData.FetchableTopicResponse()
                      .setTopic(n)
                      .setPartitions(new ArrayList<>()))
          .partitions()
          .add(out);
      if (w.topic() instanceof Refused refused) {
        out.setErrorCode(refused.error().code());
        continue;
      }
      TopicName topic = ((Found) w.topic()).topic().name();
      topics.add(topic);
      List<Long> h = heads(topic);
      int p = w.partition().partition();
      if (p < 0 || p >= h.size()) {
        out.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        continue;
      }
      long head = h.get(p);
      long offset = w.partition().fetchOffset();
      out.setHighWatermark(head).setLastStableOffset(head);
      if (offset > head || offset < 0) {
        out.setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code());
        continue;
      }
      if (offset == head || bytes >= r.maxBytes()) {
        continue; // nothing new, or the answer is full: the partition waits for the next fetch
      }
      int limit = Math.max(1, Math.min(w.partition().partitionMaxBytes(), r.maxBytes() - bytes));
      List<Event> events =
          boxline.admin().events(new EventQuery(topic, p, offset, null, null, MAX_EVENTS));
      if (events.isEmpty()) {
        // Retention deleted what follows the offset, or the head moved back (never): out of range.
        out.setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code());
        continue;
      }
      if (events.get(0).sequence() != offset + 1) {
        out.setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code())
            .setLogStartOffset(events.get(0).sequence() - 1);
        continue;
      }
      long last = events.get(events.size() - 1).sequence();
      if (last > head) {
        out.setHighWatermark(last).setLastStableOffset(last);
      }
      MemoryRecords records = records(events, limit);
      out.setRecords(records);
      bytes += records.sizeInBytes();
    }
    boolean over = System.nanoTime() - deadline >= 0;
    if (bytes >= Math.max(1, r.minBytes()) || over || topics.isEmpty()) {
      return KafkaApis.done(
          new FetchResponseData().setResponses(new ArrayList<>(byTopic.values())));
    }
    long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
    CompletableFuture<Void> woken =
        boxline.remoteConsumers().awaitAppend(topics, Duration.ofMillis(left));
    waiting.add(woken);
    return woken
        .handle((v, e) -> null)
        .thenComposeAsync(
            v -> {
              waiting.remove(woken);
              // Woken early: read again; at the deadline: answer what there is (nothing).
              return attempt(wanted, r, deadline);
            },
            executor);
  }

  /** The topic's heads, read again only when its log has grown since they were read. */
  private List<Long> heads(TopicName topic) {
    Heads known = heads.get(topic);
    boolean fresh =
        known != null
            && !known.grown().isDone()
            && (boxline.remoteConsumers().hearsEveryAppend()
                || System.nanoTime() - known.readAt() < 500_000_000L);
    if (fresh) {
      return known.heads();
    }
    // Listen before reading, so a growth during the read is not missed.
    CompletableFuture<Void> grown =
        boxline.remoteConsumers().awaitAppend(topic, Duration.ofMinutes(5));
    List<Long> read = boxline.admin().topicState(topic).heads();
    heads.put(topic, new Heads(read, grown, System.nanoTime()));
    return read;
  }

  /** The events as one record batch of at most about {@code maxBytes} (at least one event). */
  static MemoryRecords records(List<Event> events, int maxBytes) {
    MemoryRecordsBuilder b =
        MemoryRecords.builder(
            ByteBuffer.allocate(Math.min(maxBytes, 64 * 1024) + 512),
            RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE,
            TimestampType.CREATE_TIME,
            events.get(0).sequence() - 1);
    int size = 0;
    for (Event e : events) {
      int approx = e.payload().length + (e.key() == null ? 0 : e.key().length() * 3) + 64;
      if (size > 0 && size + approx > maxBytes) {
        break;
      }
      size += approx;
      b.appendWithOffset(
          e.sequence() - 1,
          e.createdAt().toEpochMilli(),
          e.key() == null ? null : e.key().getBytes(StandardCharsets.UTF_8),
          e.payload(),
          headers(e));
    }
    return b.build();
  }

  /**
   * The event's headers, and its type, source and content type as CloudEvents-style headers where
   * they are not what a record produced without them gets (so a record round-trips unchanged).
   */
  static Header[] headers(Event e) {
    List<Header> out = new ArrayList<>(e.headers().size() + 3);
    e.headers().forEach((k, v) -> out.add(new RecordHeader(k, v.getBytes(StandardCharsets.UTF_8))));
    if (!DEFAULT_TYPE.equals(e.type())) {
      out.add(new RecordHeader("ce_type", e.type().getBytes(StandardCharsets.UTF_8)));
    }
    if (e.source() != null) {
      out.add(new RecordHeader("ce_source", e.source().getBytes(StandardCharsets.UTF_8)));
    }
    if (e.contentType() != null && !DEFAULT_CONTENT_TYPE.equals(e.contentType())) {
      out.add(new RecordHeader("content-type", e.contentType().getBytes(StandardCharsets.UTF_8)));
    }
    return out.toArray(Header[]::new);
  }
}
