package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.TopicName;
import io.boxline.server.internal.Auth.Action;
import io.boxline.server.internal.KafkaApis.Found;
import io.boxline.server.internal.KafkaApis.Refused;
import io.boxline.server.internal.KafkaApis.Resolved;
import io.boxline.spi.CursorStore;
import io.boxline.spi.PartitionRead;
import io.boxline.spi.StoredEvent;
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

  /** The header that keeps a produced record's timestamp: CloudEvents' time attribute. */
  static final String TIME_HEADER = "ce_time";

  static final String DEFAULT_CONTENT_TYPE = "application/octet-stream";

  private final Boxline boxline;
  private final CursorStore store;
  private final KafkaCatalog catalog;
  private final java.util.concurrent.Executor executor;
  private final KafkaApis apis;
  private final Set<CompletableFuture<Void>> waiting = ConcurrentHashMap.newKeySet();

  KafkaFetch(
      Boxline boxline,
      CursorStore store,
      KafkaCatalog catalog,
      KafkaApis apis,
      java.util.concurrent.Executor executor) {
    this.store = store;
    this.catalog = catalog;
    this.executor = executor;
    this.boxline = boxline;
    this.apis = apis;
  }

  /** Ends every wait (the server stops). */
  void wakeAll() {
    waiting.forEach(w -> w.complete(null));
  }

  /** A partition to read for a fetch: where its answer goes, the read, its head, its byte limit. */
  private record Read(
      FetchResponseData.PartitionData out, PartitionRead read, long head, int maxBytes) {}

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
    return attempt(c, wanted, r, deadline);
  }

  private CompletableFuture<ApiMessage> attempt(
      KafkaConnection c, List<Wanted> wanted, FetchRequestData r, long deadline) {
    Map<String, FetchResponseData.FetchableTopicResponse> byTopic = new java.util.LinkedHashMap<>();
    int bytes = 0;
    Set<TopicName> topics = new LinkedHashSet<>();
    List<Read> reads = new ArrayList<>();
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
      List<Long> h = catalog.heads(topic);
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
      if (offset == head) {
        continue; // nothing new
      }
      reads.add(
          new Read(
              out,
              new PartitionRead(((Found) w.topic()).topic().id(), p, offset, MAX_EVENTS),
              head,
              Math.max(1, w.partition().partitionMaxBytes())));
    }
    // Every partition with something to read: what was read ahead for this connection, the rest
    // in one round trip.
    if (!reads.isEmpty()) {
      List<List<StoredEvent>> read = read(c, reads);
      List<PartitionRead> ahead = new ArrayList<>();
      for (int i = 0; i < reads.size() && bytes < r.maxBytes(); i++) {
        Read rd = reads.get(i);
        List<StoredEvent> events = read.get(i);
        long offset = rd.read().afterSequence();
        if (events.isEmpty() || events.get(0).sequence() != offset + 1) {
          // Retention deleted what follows the offset: out of range, with where the log starts.
          rd.out().setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code());
          if (!events.isEmpty()) {
            rd.out().setLogStartOffset(events.get(0).sequence() - 1);
          }
          continue;
        }
        long last = events.get(events.size() - 1).sequence();
        if (last > rd.head()) {
          rd.out().setHighWatermark(last).setLastStableOffset(last);
        }
        int fit = fitting(events, Math.min(rd.maxBytes(), r.maxBytes() - bytes));
        MemoryRecords records = records(events.subList(0, fit));
        rd.out().setRecords(records);
        bytes += records.sizeInBytes();
        if (fit == events.size() && events.size() == MAX_EVENTS) {
          // A backlog: the next fetch of this partition will want what follows.
          ahead.add(
              new PartitionRead(rd.read().topicId(), rd.read().partition(), last, MAX_EVENTS));
        }
      }
      readAhead(c, ahead);
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
              return attempt(c, wanted, r, deadline);
            },
            executor);
  }

  /**
   * The reads' events: those read ahead for the connection (waited for if still reading), the
   * others in one round trip. What was read ahead and not asked for is dropped.
   */
  private List<List<StoredEvent>> read(KafkaConnection c, List<Read> reads) {
    Map<PartitionRead, CompletableFuture<List<StoredEvent>>> ahead = new HashMap<>(c.readAhead);
    c.readAhead.clear();
    List<PartitionRead> rest = new ArrayList<>();
    for (Read rd : reads) {
      if (!ahead.containsKey(rd.read())) {
        rest.add(rd.read());
      }
    }
    List<List<StoredEvent>> fromStore = rest.isEmpty() ? List.of() : store.readEach(rest);
    List<List<StoredEvent>> out = new ArrayList<>(reads.size());
    int next = 0;
    for (Read rd : reads) {
      CompletableFuture<List<StoredEvent>> f = ahead.get(rd.read());
      List<StoredEvent> events = null;
      if (f != null) {
        try {
          events = f.join();
        } catch (RuntimeException e) {
          events = store.readEach(List.of(rd.read())).get(0); // the read ahead failed: read now
        }
      }
      out.add(events != null ? events : fromStore.get(next++));
    }
    return out;
  }

  /**
   * Reads these partitions' next events now, in one round trip on a request thread, while the
   * client takes in the answer: the next fetch finds them read (as a broker's page cache would).
   */
  private void readAhead(KafkaConnection c, List<PartitionRead> next) {
    if (next.isEmpty()) {
      return;
    }
    CompletableFuture<List<List<StoredEvent>>> all =
        CompletableFuture.supplyAsync(() -> store.readEach(next), executor);
    for (int i = 0; i < next.size(); i++) {
      int at = i;
      c.readAhead.put(next.get(i), all.thenApply(l -> l.get(at)));
    }
  }

  /** How many of the events fit in about {@code maxBytes} (at least one). */
  static int fitting(List<StoredEvent> events, int maxBytes) {
    int size = 0;
    int n = 0;
    for (StoredEvent e : events) {
      int approx = e.payload().length + (e.key() == null ? 0 : e.key().length() * 3) + 64;
      if (n > 0 && size + approx > maxBytes) {
        break;
      }
      size += approx;
      n++;
    }
    return n;
  }

  /** The events as one record batch. */
  static MemoryRecords records(List<StoredEvent> events) {
    MemoryRecordsBuilder b =
        MemoryRecords.builder(
            ByteBuffer.allocate(capacity(events)),
            RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE,
            TimestampType.CREATE_TIME,
            events.get(0).sequence() - 1);
    for (StoredEvent e : events) {
      b.appendWithOffset(
          e.sequence() - 1,
          timestamp(e),
          e.key() == null ? null : e.key().getBytes(StandardCharsets.UTF_8),
          e.payload(),
          headers(e));
    }
    return b.build();
  }

  /**
   * The record's timestamp: the producer's, kept in the {@code ce_time} header, else when the event
   * was committed.
   */
  static long timestamp(StoredEvent e) {
    String time = e.headers().get(TIME_HEADER);
    long producer = time == null ? -1 : producerTime(time);
    return producer >= 0 ? producer : e.createdAt().toEpochMilli();
  }

  /** A {@code ce_time} value in epoch milliseconds, or -1 where it is no instant. */
  private static long producerTime(String value) {
    try {
      return Math.max(-1, java.time.Instant.parse(value).toEpochMilli());
    } catch (java.time.DateTimeException | ArithmeticException e) {
      return -1;
    }
  }

  /** About what the batch takes, so that the buffer is not grown and copied as it fills. */
  private static int capacity(List<StoredEvent> events) {
    long size = 1024;
    for (StoredEvent e : events) {
      size += e.payload().length + (e.key() == null ? 0 : e.key().length() * 3L) + 48;
    }
    return (int) Math.min(size, Integer.MAX_VALUE - 8);
  }

  /**
   * The event's headers, and its type, source and content type as CloudEvents-style headers where
   * they are not what a record produced without them gets (so a record round-trips unchanged).
   */
  static Header[] headers(StoredEvent e) {
    List<Header> out = new ArrayList<>(e.headers().size() + 3);
    e.headers()
        .forEach(
            (k, v) -> {
              if (!k.equals(TIME_HEADER) || producerTime(v) < 0) {
                out.add(new RecordHeader(k, v.getBytes(StandardCharsets.UTF_8)));
              }
            });
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
