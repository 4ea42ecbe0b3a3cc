package io.boxline.internal;

import io.boxline.SubscriptionInfo;
import io.boxline.spi.CatalogStore;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.PurgeResult;
import io.boxline.spi.RetentionStore;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The {@code boxline-retention} thread: every interval, if this instance leads the sequencer (so
 * exactly one instance of a deployment does it), deletes events past their topic's retention and
 * old inbox entries, dead letters and idempotency keys, in bounded batches. First it marks the
 * subscriptions whose group has a live member as active, so that retention stops waiting for those
 * nobody has consumed for their topic's {@code abandonAfter}. Liveness comes from the coordination
 * store (the database or etcd), the same source the groups use.
 */
final class RetentionLoop extends LeaderLoop {
  private static final System.Logger LOG = System.getLogger(RetentionLoop.class.getName());
  private static final int BATCH = 5_000;

  private final RetentionStore store;
  private final CatalogStore catalog;
  private final CoordinationStore coordination;
  private final Runnable afterLogPurge;
  private final Duration inboxAge;
  private final Duration deadLetterAge;
  private final Duration idempotencyAge;
  final AtomicLong deleted = new AtomicLong();
  final AtomicLong segmentsDropped = new AtomicLong();
  final AtomicLong segmentEvents = new AtomicLong();

  <S extends RetentionStore & CatalogStore> RetentionLoop(
      S store,
      CoordinationStore coordination,
      Runnable afterLogPurge,
      BooleanSupplier leading,
      String owner,
      Duration interval,
      Duration inboxAge,
      Duration deadLetterAge,
      Duration idempotencyAge) {
    super(leading, interval, "boxline-retention-" + owner, "retention run");
    this.store = store;
    this.catalog = store;
    this.coordination = coordination;
    this.afterLogPurge = afterLogPurge;
    this.inboxAge = inboxAge;
    this.deadLetterAge = deadLetterAge;
    this.idempotencyAge = idempotencyAge;
  }

  @Override
  void step() {
    List<Long> active = new ArrayList<>();
    for (SubscriptionInfo s : catalog.subscriptions()) {
      if (!coordination.liveMembers(s.name()).isEmpty()) {
        active.add(s.id());
      }
    }
    store.markActive(active);
    PurgeResult r = store.purge(inboxAge, deadLetterAge, idempotencyAge, BATCH);
    deleted.addAndGet(r.total());
    segmentsDropped.addAndGet(r.logSegments());
    segmentEvents.addAndGet(r.logSegmentEvents());
    if (r.events() > 0) {
      // Events this process handed over recently may be gone now; a consumer whose cursor is behind
      // them (an abandoned subscription, deleteUnconsumed) must read the log, not the hand-over.
      afterLogPurge.run();
    }
    if (r.total() > 0) {
      LOG.log(Level.INFO, "retention deleted {0}", r);
    }
  }
}
