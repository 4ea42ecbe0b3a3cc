package io.boxline.internal;

import io.boxline.ConnectionStateException;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.OutgoingEvent;
import io.boxline.Partitioner;
import io.boxline.PayloadTooLargeException;
import io.boxline.PublishInterceptor;
import io.boxline.PublishOptions;
import io.boxline.PublishResult;
import io.boxline.Publisher;
import io.boxline.Sequencing;
import io.boxline.StoreException;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import io.boxline.spi.LogAppend;
import io.boxline.spi.OutboxRecord;
import io.boxline.spi.PartitionHead;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.PublishStore;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/** Validates, encodes and partitions events, then appends them in the caller's transaction. */
final class DefaultPublisher implements Publisher, TransactionScope.Participant {
  private final PublishStore store;
  private final TopicCache topics;
  private final EventTypes types;
  private final Partitioner partitioner;
  private final int maxPayloadBytes;
  private final SequencerLoop sequencer;
  private final long notifyIntervalNanos;
  private final Observers observers;
  private final PublishInterceptor[] interceptors;
  private final Announcer announcer;
  private final AtomicLong lastNotify = new AtomicLong(System.nanoTime() - Long.MAX_VALUE / 2);

  /** The transaction {@code inTransaction} runs on this thread, if any: it says when it commits. */
  DefaultPublisher(
      PublishStore store,
      TopicCache topics,
      EventTypes types,
      Partitioner partitioner,
      int maxPayloadBytes,
      SequencerLoop sequencer,
      long notifyIntervalNanos,
      Observers observers,
      List<PublishInterceptor> interceptors,
      Announcer announcer) {
    this.announcer = announcer;
    this.store = store;
    this.topics = topics;
    this.types = types;
    this.partitioner = partitioner;
    this.maxPayloadBytes = maxPayloadBytes;
    this.sequencer = sequencer;
    this.notifyIntervalNanos = notifyIntervalNanos;
    this.observers = observers;
    this.interceptors = interceptors.toArray(new PublishInterceptor[0]);
  }

  @Override
  public PublishResult publish(Connection tx, Object event) {
    return publishAll(tx, List.of(Objects.requireNonNull(event, "event"))).get(0);
  }

  @Override
  public PublishResult publish(Connection tx, Object event, PublishOptions options) {
    Objects.requireNonNull(event, "event");
    Objects.requireNonNull(options, "options");
    checkConnection(tx);
    return append(tx, List.of(toOutgoing(event, options))).get(0);
  }

  @Override
  public PublishResult publish(Connection tx, OutgoingEvent event) {
    return publishAll(tx, List.of(Objects.requireNonNull(event, "event"))).get(0);
  }

  @Override
  public List<PublishResult> publishAll(Connection tx, List<?> events) {
    Objects.requireNonNull(events, "events");
    checkConnection(tx);
    if (events.isEmpty()) {
      return List.of();
    }
    List<OutgoingEvent> outgoing = new ArrayList<>(events.size());
    for (Object e : events) {
      Objects.requireNonNull(e, "events must not contain null");
      outgoing.add(
          e instanceof OutgoingEvent ? (OutgoingEvent) e : toOutgoing(e, PublishOptions.options()));
    }
    return append(tx, outgoing);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private OutgoingEvent toOutgoing(Object event, PublishOptions options) {
    if (event instanceof OutgoingEvent) {
      throw new ValidationException(
          "PublishOptions apply to typed events; set type/topic/key on the OutgoingEvent builder instead");
    }
    EventType t = types.forClass(event.getClass());
    TopicName topic = options.topic() != null ? options.topic() : t.topic();
    String key = options.keySet() ? options.key() : t.keyOf(event);
    Map<String, String> headers = new LinkedHashMap<>(options.headers());
    return OutgoingEvent.builder(topic)
        .type(options.type() != null ? options.type() : t.type())
        .key(key)
        .source(t.source())
        .contentType(t.codec().contentType())
        .payload(t.codec().encode(event))
        .headers(headers)
        .idempotencyKey(options.idempotencyKey())
        .deliverAt(options.deliverAt())
        .build();
  }

  private List<PublishResult> append(Connection tx, List<OutgoingEvent> events) {
    List<OutboxRecord> records = new ArrayList<>(events.size());
    List<TopicInfo> infos = new ArrayList<>(events.size());
    for (OutgoingEvent e : events) {
      TopicInfo topic = topics.get(e.topic());
      if (e.payload().length > maxPayloadBytes) {
        throw new PayloadTooLargeException(
            e.topic().toString(), e.payload().length, maxPayloadBytes);
      }
      int partition =
          e.key() == null
              ? ThreadLocalRandom.current().nextInt(topic.partitions())
              : partitioner.partition(e.key(), topic.partitions());
      if (partition < 0 || partition >= topic.partitions()) {
        throw new ValidationException(
            "partitioner returned "
                + partition
                + " for topic '"
                + e.topic()
                + "' with "
                + topic.partitions()
                + " partitions");
      }
      infos.add(topic);
      records.add(
          new OutboxRecord(
              e.id(),
              topic.id(),
              partition,
              e.key(),
              e.type(),
              e.source(),
              e.contentType(),
              e.payload(),
              interceptors.length == 0 ? e.headers() : intercept(e),
              e.idempotencyKey(),
              e.deliverAt()));
    }
    TransactionScope m = TransactionScope.of(tx);
    if (m != null) {
      m.checkKeys(records, infos);
    }
    List<UUID> existing = store(tx, records, infos, m);
    if (m != null) {
      m.claimed(records, existing);
    }
    if (observers.active()) {
      if (m != null) {
        countPublished(infos, existing, m.published); // reported once it has committed
      } else {
        reportPublished(infos, existing);
      }
    }
    List<PublishResult> results = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      UUID prior = existing.get(i);
      OutboxRecord r = records.get(i);
      results.add(
          new PublishResult(
              prior == null ? r.eventId() : prior,
              infos.get(i).name(),
              r.partition(),
              prior != null));
    }
    return results;
  }

  /**
   * Appends the events of SEQUENCER topics to the outbox and those of IN_TRANSACTION topics to the
   * log (or, in {@code inTransaction}'s transaction {@code m}, holds the latter back to its
   * commit); returns, per record, the id of an earlier event with the same idempotency key or null.
   */
  private List<UUID> store(
      Connection tx, List<OutboxRecord> records, List<TopicInfo> infos, TransactionScope m) {
    List<OutboxRecord> outbox = new ArrayList<>(records.size());
    List<OutboxRecord> direct = new ArrayList<>();
    for (int i = 0; i < records.size(); i++) {
      (infos.get(i).sequencing() == Sequencing.IN_TRANSACTION ? direct : outbox)
          .add(records.get(i));
    }
    List<UUID> fromOutbox = outbox.isEmpty() ? List.of() : store.append(tx, outbox);
    List<UUID> fromLog = direct.isEmpty() ? List.of() : storeDirect(tx, direct, m);
    if (fromOutbox.size() != outbox.size()) {
      throw new IllegalStateException(
          "the store returned " + fromOutbox.size() + " results for " + outbox.size() + " events");
    }
    if (!outbox.isEmpty()) {
      wake(tx, m);
    }
    List<UUID> existing = new ArrayList<>(records.size());
    int o = 0;
    int d = 0;
    for (TopicInfo info : infos) {
      if (info.sequencing() != Sequencing.IN_TRANSACTION) {
        existing.add(fromOutbox.get(o++));
      } else {
        existing.add(fromLog.get(d++));
      }
    }
    return existing;
  }

  /**
   * Stores events of IN_TRANSACTION topics: at once in a plain transaction; in {@code
   * inTransaction}'s, held back to its commit (see appendHeldBack), after their idempotency keys
   * were claimed now, so the caller still learns about duplicates at once and keyed events lock no
   * partition before the commit either. Returns, per record, the owner of its key or null.
   */
  private List<UUID> storeDirect(Connection tx, List<OutboxRecord> direct, TransactionScope m) {
    if (m == null) {
      return appendToLog(tx, direct, null).stream().map(LogAppend::existingEventId).toList();
    }
    if (direct.stream().allMatch(r -> r.idempotencyKey() == null)) {
      m.heldBack.addAll(direct);
      return Collections.nCopies(direct.size(), null);
    }
    List<UUID> owners = store.claimIdempotencyKeys(tx, direct);
    if (owners.size() != direct.size()) {
      throw new IllegalStateException(
          "the store returned " + owners.size() + " owners for " + direct.size() + " events");
    }
    for (int i = 0; i < direct.size(); i++) {
      if (owners.get(i) == null) {
        m.heldBack.add(direct.get(i).withoutIdempotencyKey()); // its key is claimed already
      }
    }
    return owners;
  }

  private List<LogAppend> appendToLog(
      Connection tx, List<OutboxRecord> direct, TransactionScope m) {
    List<LogAppend> fromLog = store.appendToLog(tx, direct);
    if (fromLog.size() != direct.size()) {
      throw new IllegalStateException(
          "the store returned " + fromLog.size() + " results for " + direct.size() + " events");
    }
    appendedToLog(tx, direct, fromLog, m);
    return fromLog;
  }

  /**
   * Writes the events {@code inTransaction} held back, all in one call that locks their partitions
   * in key order (a stable sort keeps each partition's call order): transactions that do this never
   * deadlock each other, and hold the partitions only through their commit.
   */
  private void appendHeldBack(TransactionScope m) {
    if (m.heldBack.isEmpty()) {
      return;
    }
    List<OutboxRecord> records = new ArrayList<>(m.heldBack);
    m.heldBack.clear();
    records.sort(
        java.util.Comparator.comparingLong(OutboxRecord::topicId)
            .thenComparingInt(OutboxRecord::partition));
    appendToLog(m.tx, records, m);
  }

  /** {@code inTransaction} is about to commit: the held-back events go into the log now. */
  @Override
  public void beforeCommit(TransactionScope m) {
    appendHeldBack(m);
  }

  /**
   * Events now in the log, uncommitted: handed over after the commit when {@code inTransaction}
   * runs the transaction, else watched until their heads become visible.
   */
  private void appendedToLog(
      Connection tx, List<OutboxRecord> records, List<LogAppend> results, TransactionScope m) {
    Map<PartitionKey, List<StoredEvent>> events = new HashMap<>();
    for (int i = 0; i < records.size(); i++) {
      LogAppend a = results.get(i);
      if (a.existingEventId() != null) {
        continue;
      }
      OutboxRecord r = records.get(i);
      events
          .computeIfAbsent(PartitionKey.of(r.topicId(), r.partition()), k -> new ArrayList<>())
          .add(
              new StoredEvent(
                  r.eventId(),
                  a.sequence(),
                  r.key(),
                  r.type(),
                  r.source(),
                  r.contentType(),
                  r.payload(),
                  r.headers(),
                  a.createdAt(),
                  r.deliverAt()));
    }
    if (events.isEmpty()) {
      return;
    }
    List<PartitionHead> heads = new ArrayList<>(events.size());
    events.forEach(
        (k, list) ->
            heads.add(
                new PartitionHead(
                    k.topicId(), k.partition(), list.get(list.size() - 1).sequence())));
    // Told at the commit, to every process (this one's listener too), when the store can and the
    // interval allows; else after the commit (inTransaction) or once the heads are visible.
    boolean told = announcer.announceInTransaction(() -> store.announceIn(tx, heads));
    if (m != null) {
      events.forEach(
          (k, list) -> m.appended.computeIfAbsent(k, x -> new ArrayList<>()).addAll(list));
      m.announcedInTransaction &= told;
      return;
    }
    if (!told) {
      announcer.watch(heads);
    }
  }

  /** The headers the interceptors make of an event's own. */
  private Map<String, String> intercept(OutgoingEvent e) {
    Map<String, String> headers = new LinkedHashMap<>(e.headers());
    for (PublishInterceptor i : interceptors) {
      i.beforePublish(e, headers);
    }
    for (Map.Entry<String, String> h : headers.entrySet()) {
      if (h.getKey() == null || h.getValue() == null) {
        throw new ValidationException(
            "a publish interceptor set header "
                + h.getKey()
                + " = "
                + h.getValue()
                + " on an event of topic '"
                + e.topic()
                + "'; header names and values must not be null");
      }
    }
    return headers;
  }

  private static void countPublished(
      List<TopicInfo> infos, List<UUID> existing, Map<TopicName, Integer> counts) {
    for (int i = 0; i < infos.size(); i++) {
      if (existing.get(i) == null) {
        counts.merge(infos.get(i).name(), 1, Integer::sum);
      }
    }
  }

  /** One observer call per run of events of the same topic; duplicates are not counted. */
  private void reportPublished(List<TopicInfo> infos, List<UUID> existing) {
    TopicName topic = null;
    int run = 0;
    for (int i = 0; i < infos.size(); i++) {
      if (existing.get(i) != null) {
        continue;
      }
      TopicName t = infos.get(i).name();
      if (!t.equals(topic)) {
        if (run > 0) {
          observers.published(topic, run);
        }
        topic = t;
        run = 0;
      }
      run++;
    }
    if (run > 0) {
      observers.published(topic, run);
    }
  }

  @Override
  public void committed() {
    if (sequencer != null) {
      sequencer.committedLocally();
    }
    announcer.lookNow();
  }

  /** A transaction {@code inTransaction} ran has committed. */
  @Override
  public void afterCommit(TransactionScope m) {
    m.published.forEach(observers::published);
    if (!m.appended.isEmpty()) {
      for (List<StoredEvent> list : m.appended.values()) {
        list.sort(java.util.Comparator.comparingLong(StoredEvent::sequence));
      }
      announcer.committed(m.appended, m.announcedInTransaction);
    }
    if (m.outbox && sequencer != null) {
      sequencer.committedLocally(); // the sequencer finds the rows on its first look
    }
  }

  /**
   * Local sequencer leading: an in-process hint (free). Otherwise a NOTIFY in this transaction, at
   * most once per interval per publisher, so that commits are not serialised on the notification
   * queue.
   */
  private void wake(Connection tx, TransactionScope m) {
    if (m != null) {
      m.outbox = true;
    }
    if (sequencer != null && sequencer.isLeader()) {
      // A transaction inTransaction manages reports its commit itself; quick looks before that
      // commit would only find nothing and keep the sequencer busy when the commit arrives.
      if (m == null) {
        sequencer.hint();
      }
      return;
    }
    long now = System.nanoTime();
    long last = lastNotify.get();
    if (now - last >= notifyIntervalNanos && lastNotify.compareAndSet(last, now)) {
      store.notifyOutbox(tx);
    }
  }

  static void checkConnection(Connection tx) {
    Objects.requireNonNull(tx, "connection");
    try {
      if (tx.isClosed()) {
        throw new ConnectionStateException(
            "the connection is closed; publish inside an open transaction (the one that writes your"
                + " business rows)");
      }
      if (tx.getAutoCommit()) {
        throw new ConnectionStateException(
            "the connection is in auto-commit mode, so the event would commit apart from your business"
                + " rows; call connection.setAutoCommit(false) and commit after publishing, or use"
                + " boxline.inTransaction(...)");
      }
    } catch (SQLException e) {
      throw new StoreException("cannot inspect the connection handed to publish", e);
    }
  }
}
