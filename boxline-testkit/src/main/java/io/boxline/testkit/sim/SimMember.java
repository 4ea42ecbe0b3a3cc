package io.boxline.testkit.sim;

import io.boxline.PartitionLag;
import io.boxline.SubscriptionInfo;
import io.boxline.spi.CommitOutcome;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.Fence;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.Park;
import io.boxline.spi.ParkState;
import io.boxline.spi.ParkedEvent;
import io.boxline.spi.ParkedSummary;
import io.boxline.spi.PartitionKey;
import io.boxline.spi.Resolution;
import io.boxline.spi.Settlement;
import io.boxline.spi.Store;
import io.boxline.spi.StoredEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A member of the subscription's consumer group, making the store calls a Java consumer makes: it
 * checks in, reclaims the leases of members gone, gives back what is not its share and takes what
 * is, fences each cursor it takes, delivers batches (parking failures, holding later events of a
 * parked key, scheduled events parked until their time), retries parked events when due and
 * dead-letters them after {@value #MAX_ATTEMPTS} attempts. After a lost call it no longer trusts
 * what it knows and reads its cursors again.
 */
final class SimMember {
  static final int MAX_ATTEMPTS = 3;

  /** What the member believes of one partition it holds. */
  private static final class Held {
    final long epoch;
    long position;
    Set<String> blocked = new HashSet<>();
    Instant nextDue;
    boolean fresh = true;

    Held(long epoch, long position) {
      this.epoch = epoch;
      this.position = position;
    }
  }

  private final String id;
  private final Store store;
  private final CoordinationStore coordination;
  private final String group;
  private final SubscriptionInfo subscription;
  private final long topicId;
  private final int partitions;
  private final boolean transactional;
  private final SimClock clock;
  private final Random random;
  private final Faults faults;
  private final Ledger ledger;
  private final Duration ttl;
  private final Map<Integer, Held> held = new TreeMap<>();
  private Instant lastCheckIn;

  /** A batch handled and not yet settled: a slow handler, whose settlement comes turns later. */
  private record Batch(
      int partition,
      Held held,
      Settlement settlement,
      List<UUID> effects,
      Set<String> blocked,
      Instant due,
      int size) {}

  private Batch slow;
  private Instant slowUntil;

  SimMember(
      String id,
      Store store,
      SubscriptionInfo subscription,
      long topicId,
      int partitions,
      boolean transactional,
      SimClock clock,
      Random random,
      Faults faults,
      Ledger ledger,
      Duration ttl) {
    this.id = id;
    this.store = store;
    this.coordination = store.coordination();
    this.group = subscription.name();
    this.subscription = subscription;
    this.topicId = topicId;
    this.partitions = partitions;
    this.transactional = transactional;
    this.clock = clock;
    this.random = random;
    this.faults = faults;
    this.ledger = ledger;
    this.ttl = ttl;
  }

  String name() {
    return id;
  }

  /** The process dies: what it knew is gone; its leases stay until their deadline passes. */
  void crash() {
    slow = null;
    held.clear();
    lastCheckIn = null;
    ledger.incident("member crashed");
  }

  String turn() {
    try {
      Instant now = clock.instant();
      if (slow != null && now.isBefore(slowUntil)) {
        return "still handling"; // the whole process is paused, its heartbeats too (a long GC)
      }
      if (slow != null) {
        // The handler finishes now, however long the member stalled or the clock jumped: its
        // settlement must be refused when another member took the partition meanwhile.
        Batch b = slow;
        slow = null;
        return settle(b);
      }
      if (lastCheckIn == null || !now.isBefore(lastCheckIn.plus(ttl.dividedBy(3)))) {
        return checkIn();
      }
      if (held.isEmpty()) {
        return "holds nothing";
      }
      List<Integer> ps = new ArrayList<>(held.keySet());
      int p = ps.get(random.nextInt(ps.size()));
      Held h = held.get(p);
      if (!h.fresh) {
        return reread(p, h);
      }
      if (h.nextDue != null && !h.nextDue.isAfter(now)) {
        return retry(p, h);
      }
      return deliver(p, h);
    } catch (Faults.LostCall e) {
      // The member cannot tell what the call did: it reads its cursors again before going on.
      ledger.incident("member's call lost");
      held.values().forEach(h -> h.fresh = false);
      return "call lost (" + e.ran + ")";
    }
  }

  // ------------------------------------------------------------------ the group

  private String checkIn() {
    GroupView v = faults.through("check-in", () -> coordination.checkIn(group, id, 1, ttl));
    lastCheckIn = clock.instant();
    List<String> live = v.members().stream().map(Member::id).distinct().sorted().toList();
    Map<Integer, Lease> leases = new HashMap<>();
    for (Lease l : v.leases()) {
      if (l.topicId() == topicId) {
        leases.put(l.partition(), l);
      }
    }
    StringBuilder did = new StringBuilder("check-in, " + live.size() + " live");
    // Leases it believed it held that the view gives elsewhere are lost.
    for (var it = held.entrySet().iterator(); it.hasNext(); ) {
      var e = it.next();
      Lease l = leases.get(e.getKey());
      if (l == null || !l.owner().equals(id) || l.epoch() != e.getValue().epoch) {
        it.remove();
        ledger.incident("lease lost while paused");
        did.append(", lost ").append(e.getKey());
      }
    }
    if (leases.values().stream().anyMatch(l -> !live.contains(l.owner()) || l.releasing())) {
      int n =
          faults.through(
              "reclaim", () -> coordination.reclaim(group, Set.copyOf(live), Duration.ZERO));
      did.append(", reclaimed ").append(n);
      if (n > 0) {
        return did.toString(); // the next check-in sees the freed partitions
      }
    }
    int me = live.indexOf(id);
    if (me < 0) {
      return did.append(", not live").toString();
    }
    List<PartitionKey> wanted = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      boolean mine = p % live.size() == me;
      Lease l = leases.get(p);
      if (!mine && held.containsKey(p)) {
        release(p, held.remove(p).epoch);
        did.append(", released ").append(p);
      } else if (l != null && l.owner().equals(id) && !held.containsKey(p)) {
        release(p, l.epoch()); // under its id from before a crash or a lost call: give it back
        did.append(", gave back ").append(p);
      } else if (mine && !held.containsKey(p) && (l == null || !live.contains(l.owner()))) {
        wanted.add(PartitionKey.of(topicId, p));
      }
    }
    if (!wanted.isEmpty()) {
      List<OptionalLong> got =
          faults.through("acquire", () -> coordination.acquire(group, wanted, id));
      for (int i = 0; i < wanted.size(); i++) {
        if (got.get(i).isPresent()) {
          take(wanted.get(i), got.get(i).getAsLong());
          did.append(", took ").append(wanted.get(i).partition());
        }
      }
    }
    return did.toString();
  }

  private void release(int p, long epoch) {
    PartitionKey k = PartitionKey.of(topicId, p);
    faults.through("mark releasing", () -> coordination.markReleasing(group, k, id, epoch));
    faults.through("release", () -> coordination.release(group, k, id, epoch));
  }

  private void take(PartitionKey k, long epoch) {
    OptionalLong position =
        faults
            .through(
                "fence",
                () -> store.fenceCursors(subscription.id(), List.of(new Fence(k, epoch)), id))
            .get(0);
    if (position.isEmpty()) {
      return; // a newer epoch fenced it already; the next check-in gives the lease back
    }
    ledger.fenced(id, k, epoch);
    Held h = new Held(epoch, position.getAsLong());
    held.put(k.partition(), h);
    loadParked(k, h);
  }

  private void loadParked(PartitionKey k, Held h) {
    ParkedSummary s = faults.through("parked", () -> store.parked(subscription.id(), k, false));
    h.blocked = new HashSet<>(s.blockedKeys());
    h.nextDue = s.nextDue();
  }

  /** After a lost call or a moved cursor: where the cursor stands, and what is parked. */
  private String reread(int p, Held h) {
    List<PartitionLag> lags = faults.through("lag", () -> store.lag(subscription.id()));
    for (PartitionLag lag : lags) {
      if (lag.partition() == p) {
        h.position = lag.position();
      }
    }
    loadParked(PartitionKey.of(topicId, p), h);
    h.fresh = true;
    return "read " + p + " again at " + h.position;
  }

  // ------------------------------------------------------------------ delivery

  private static boolean fails(Ledger.Message m, int attempt) {
    return m.poison() || attempt <= m.failures();
  }

  private Instant backoff(int attempt) {
    return clock.instant().plusMillis(100L * attempt);
  }

  private String deliver(int p, Held h) {
    PartitionKey k = PartitionKey.of(topicId, p);
    int limit = 1 + random.nextInt(Simulation.MAX_BATCH);
    List<StoredEvent> events =
        faults.through("read", () -> store.read(topicId, p, h.position, limit));
    if (events.isEmpty()) {
      return "nothing new in " + p;
    }
    Instant now = clock.instant();
    List<Park> parks = new ArrayList<>();
    List<UUID> effects = new ArrayList<>();
    Set<String> blocked = new HashSet<>(h.blocked);
    Instant due = h.nextDue;
    for (StoredEvent e : events) {
      Ledger.Message m = Ledger.Message.parse(-1, e.payload());
      if (blocked.contains(e.key())) {
        parks.add(
            new Park(e.sequence(), e.id(), e.key(), e.type(), ParkState.WAITING, 0, now, null));
      } else if (e.deliverAt() != null && e.deliverAt().isAfter(now)) {
        // Scheduled: parked until its time, holding the later events of its key, as a task is.
        parks.add(
            new Park(
                e.sequence(), e.id(), e.key(), e.type(), ParkState.RETRY, 0, e.deliverAt(), null));
        blocked.add(e.key());
        due = due == null || e.deliverAt().isBefore(due) ? e.deliverAt() : due;
      } else if (fails(m, 1)) {
        Instant at = backoff(1);
        parks.add(
            new Park(e.sequence(), e.id(), e.key(), e.type(), ParkState.RETRY, 1, at, "failed"));
        blocked.add(e.key());
        due = due == null || at.isBefore(due) ? at : due;
      } else if (transactional) {
        effects.add(e.id());
      } else {
        ledger.effect(e.id()); // at least once: the effect happens before the settlement
      }
    }
    long last = events.get(events.size() - 1).sequence();
    Settlement s = Settlement.move(k, h.epoch, h.position, last).parking(parks);
    Batch b = new Batch(p, h, s, effects, blocked, due, events.size());
    if (faults.hit("slow handler")) {
      slow = b;
      // Its effects (at least once) happened; whoever takes the partition meanwhile repeats them.
      ledger.incident("slow handler");
      slowUntil = clock.instant().plusMillis(random.nextLong(2 * ttl.toMillis()));
      return "handling " + events.size() + " of " + p + " slowly";
    }
    return settle(b);
  }

  private String settle(Batch b) {
    int p = b.partition;
    Held h = b.held;
    Settlement s = b.settlement;
    PartitionKey k = s.partition();
    CommitOutcome out =
        transactional
            ? inTransaction(s, b.effects)
            : faults.through("settle", () -> store.settle(subscription.id(), List.of(s)).get(0));
    switch (out) {
      case COMMITTED -> {
        ledger.settled(id, k, h.epoch);
        h.position = s.position();
        h.blocked = b.blocked;
        h.nextDue = b.due;
        return "delivered " + b.size + " of " + p + " to " + s.position();
      }
      case FENCED -> {
        if (held.get(p) == h) {
          held.remove(p);
        }
        ledger.incident("stale settlement refused");
        return "fenced out of " + p;
      }
      default -> {
        h.fresh = false;
        ledger.incident("settlement refused: " + out);
        return out + " in " + p;
      }
    }
  }

  /** The settlement and the handler's effects, in one transaction. */
  private CommitOutcome inTransaction(Settlement s, List<UUID> effects) {
    Connection tx = store.openTransaction();
    CommitOutcome out;
    try {
      out = faults.through("settle in transaction", () -> store.settleIn(tx, subscription.id(), s));
    } catch (Faults.LostCall e) {
      end(tx, false);
      throw e;
    }
    if (out != CommitOutcome.COMMITTED) {
      end(tx, false);
      return out;
    }
    Faults.Call c = faults.call("commit of a settlement");
    if (c == Faults.Call.LOST_BEFORE) {
      end(tx, false);
      throw new Faults.LostCall(false);
    }
    end(tx, true);
    effects.forEach(ledger::effect);
    if (c == Faults.Call.LOST_AFTER) {
      throw new Faults.LostCall(true);
    }
    return out;
  }

  private String retry(int p, Held h) {
    PartitionKey k = PartitionKey.of(topicId, p);
    Instant now = clock.instant();
    List<ParkedEvent> due =
        faults.through("due parked", () -> store.dueParked(subscription.id(), k, false, now, 10));
    Map<Long, Resolution> outcomes = new LinkedHashMap<>();
    int finished = 0;
    for (ParkedEvent pe : due) {
      StoredEvent e = pe.event();
      Ledger.Message m = Ledger.Message.parse(-1, e.payload());
      int attempt = pe.attempts() + 1;
      if (e.deliverAt() != null && e.deliverAt().isAfter(now)) {
        // Due because the event before it on its key finished, but scheduled later still.
        outcomes.put(
            e.sequence(),
            new Resolution(Resolution.Kind.RETRY, pe.attempts(), e.deliverAt(), "scheduled"));
      } else if (!fails(m, attempt)) {
        if (transactional) {
          Settlement s =
              Settlement.move(k, h.epoch, h.position, h.position).finishing(List.of(e.sequence()));
          CommitOutcome out = inTransaction(s, List.of(e.id()));
          if (out == CommitOutcome.FENCED) {
            held.remove(p);
            ledger.incident("stale retry refused");
            return "fenced out of " + p + " in a retry";
          }
          if (out != CommitOutcome.COMMITTED) {
            h.fresh = false;
            ledger.incident("retry refused: " + out);
            return out + " in a retry of " + p;
          }
          ledger.settled(id, k, h.epoch);
          finished++;
        } else {
          ledger.effect(e.id());
          outcomes.put(e.sequence(), Resolution.done());
        }
      } else if (attempt >= MAX_ATTEMPTS) {
        outcomes.put(e.sequence(), new Resolution(Resolution.Kind.DEAD, attempt, now, "gave up"));
      } else {
        outcomes.put(
            e.sequence(),
            new Resolution(Resolution.Kind.RETRY, attempt, backoff(attempt), "failed again"));
      }
    }
    if (!outcomes.isEmpty()) {
      boolean ok =
          faults.through(
              "resolve parked", () -> store.resolveParked(subscription.id(), k, h.epoch, outcomes));
      if (!ok) {
        held.remove(p);
        ledger.incident("stale retry outcomes refused");
        return "fenced out of " + p + " resolving retries";
      }
    }
    loadParked(k, h);
    return "retried " + due.size() + " of " + p + " (" + finished + " in transactions)";
  }

  private static void end(Connection tx, boolean commit) {
    try {
      if (commit) {
        tx.commit();
      } else {
        tx.rollback();
      }
      tx.close();
    } catch (SQLException e) {
      throw new IllegalStateException("the in-memory transaction failed to end", e);
    }
  }
}
