package io.boxline.etcd;

import io.boxline.StoreException;
import io.boxline.etcd.internal.Calls;
import io.boxline.etcd.internal.Calls.Outcome;
import io.boxline.etcd.internal.Keys;
import io.boxline.etcd.internal.Values;
import io.boxline.etcd.internal.Values.Slot;
import io.boxline.spi.PartitionKey;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The partition leases of {@link EtcdCoordination}: one key per partition (owner, epoch, releasing
 * flag, time), every change a compare-and-set on the key's mod revision, epochs that only grow.
 * Apart from the members, the policies and the client, which are {@link EtcdCoordination}'s.
 */
final class PartitionLeases {
  /** Logs under EtcdCoordination's name, as before this class was split out of it. */
  private static final System.Logger LOG = System.getLogger(EtcdCoordination.class.getName());

  /** Compare-and-set rounds before a lease that keeps changing is reported as an error. */
  private static final int CAS_ROUNDS = 10;

  private final KV kv;
  private final Keys keys;
  private final Calls calls;
  private final Clock clock;

  /** Throws when the store is closed, naming the operation. */
  private final Consumer<String> ensureOpen;

  PartitionLeases(KV kv, Keys keys, Calls calls, Clock clock, Consumer<String> ensureOpen) {
    this.kv = kv;
    this.keys = keys;
    this.calls = calls;
    this.clock = clock;
    this.ensureOpen = ensureOpen;
  }

  /** The epoch of each partition this member now holds, or -1 where it got none. */
  long[] acquire(String group, List<PartitionKey> partitions, String member) {
    long[] out = new long[partitions.size()];
    Arrays.fill(out, -1);
    if (partitions.isEmpty()) {
      return out;
    }
    String op = "acquire(group " + group + ", member " + member + ")";
    ensureOpen.accept(op);
    Map<PartitionKey, Current> current = readSlots(op, group);
    Instant now = clock.instant();
    long micros = micros(now);
    List<Integer> sent = new ArrayList<>();
    List<Slot> wanted = new ArrayList<>();
    List<CompletableFuture<TxnResponse>> txns = new ArrayList<>();
    Set<PartitionKey> seen = new HashSet<>();
    for (int i = 0; i < partitions.size(); i++) {
      PartitionKey p = partitions.get(i);
      if (!seen.add(p)) {
        continue; // asked twice: the first one decides
      }
      ByteSequence key = keys.lease(group, p);
      Current c = current.get(p);
      Cmp unchanged;
      Slot next;
      if (c == null) {
        unchanged = new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0));
        next = new Slot(p.topicId(), p.partition(), member, micros, false, now);
      } else if (c.slot().held()) {
        continue;
      } else {
        unchanged = new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(c.kv().getModRevision()));
        next = c.slot().taken(member, Math.max(c.slot().epoch() + 1, micros), now);
      }
      sent.add(i);
      wanted.add(next);
      txns.add(
          kv.txn().If(unchanged).Then(Op.put(key, Values.slot(next), PutOption.DEFAULT)).commit());
    }
    List<Outcome<TxnResponse>> outcomes = calls.awaitEach(op, txns);
    List<Integer> unanswered = new ArrayList<>();
    boolean anyAnswered = false;
    for (int j = 0; j < outcomes.size(); j++) {
      Outcome<TxnResponse> o = outcomes.get(j);
      if (o.ok()) {
        anyAnswered = true;
        if (o.value().isSucceeded()) {
          out[sent.get(j)] = wanted.get(j).epoch();
        }
      } else {
        unanswered.add(j);
      }
    }
    if (!unanswered.isEmpty()) {
      StoreException first = outcomes.get(unanswered.get(0)).failure();
      // A transaction without an answer may still have applied: look, so no lease is held
      // without its owner knowing.
      Map<PartitionKey, Current> after;
      try {
        after = readSlots(op + " (checking unanswered)", group);
      } catch (StoreException e) {
        if (!anyAnswered) {
          throw first;
        }
        LOG.log(
            System.Logger.Level.WARNING,
            "{0}: {1} of {2} lease transactions failed and could not be checked; they may stay"
                + " held until this member leaves or expires: {3}",
            op,
            unanswered.size(),
            txns.size(),
            first.getMessage());
        return out;
      }
      boolean confirmed = false;
      for (int j : unanswered) {
        Slot w = wanted.get(j);
        Current c = after.get(w.key());
        if (c != null && member.equals(c.slot().owner()) && c.slot().epoch() == w.epoch()) {
          out[sent.get(j)] = w.epoch();
          confirmed = true;
        }
      }
      if (!anyAnswered && !confirmed) {
        throw first;
      }
    }
    return out;
  }

  boolean markReleasing(String group, PartitionKey partition, String member, long epoch) {
    String op = "markReleasing(group " + group + ", " + partition + ", member " + member + ")";
    Instant now = clock.instant();
    return compareAndSet(
        op,
        keys.lease(group, partition),
        s -> isHeldBy(s, member, epoch) ? s.markedReleasing(now) : null);
  }

  boolean release(String group, PartitionKey partition, String member, long epoch) {
    String op = "release(group " + group + ", " + partition + ", member " + member + ")";
    return compareAndSet(
        op, keys.lease(group, partition), s -> isHeldBy(s, member, epoch) ? s.freed() : null);
  }

  private static boolean isHeldBy(Slot s, String member, long epoch) {
    return s != null && member.equals(s.owner()) && s.epoch() == epoch;
  }

  int reclaim(String group, Set<String> liveMembers, Duration grace) {
    String op = "reclaim(group " + group + ")";
    Instant cutoff = clock.instant().minus(grace);
    Set<String> live = Set.copyOf(liveMembers);
    return freeWhere(
        op, group, s -> !live.contains(s.owner()) || (s.releasing() && s.since().isBefore(cutoff)));
  }

  int forceRelease(String group, Collection<PartitionKey> partitions) {
    String op = "forceRelease(group " + group + ")";
    Set<PartitionKey> chosen = Set.copyOf(partitions);
    return freeWhere(op, group, s -> chosen.contains(s.key()));
  }

  /**
   * Reads the key and, while {@code change} wants a new value, compare-and-sets it on the key's mod
   * revision. Returns false as soon as {@code change} answers null (the condition does not hold). A
   * lost race re-reads the key in the same transaction ({@code Else get}).
   */
  private boolean compareAndSet(String op, ByteSequence key, Function<Slot, Slot> change) {
    ensureOpen.accept(op);
    KeyValue current = first(calls.await(op, kv.get(key)));
    for (int round = 0; round < CAS_ROUNDS; round++) {
      Slot next = change.apply(current == null ? null : Values.slot(current));
      if (next == null) {
        return false;
      }
      TxnResponse r = calls.await(op, casTxn(key, current, next));
      if (r.isSucceeded()) {
        return true;
      }
      current = first(r.getGetResponses().get(0));
    }
    throw calls.failure(op, "the lease kept changing during " + CAS_ROUNDS + " attempts");
  }

  private CompletableFuture<TxnResponse> casTxn(ByteSequence key, KeyValue current, Slot next) {
    return kv.txn()
        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(current.getModRevision())))
        .Then(Op.put(key, Values.slot(next), PutOption.DEFAULT))
        .Else(Op.get(key, GetOption.DEFAULT))
        .commit();
  }

  /**
   * Frees every held lease of the group that matches {@code which}: one range read, then one
   * compare-and-set per lease, all in flight together; a lease changed meanwhile is judged again on
   * its new value. Returns how many this call freed.
   */
  int freeWhere(String op, String group, Predicate<Slot> which) {
    ensureOpen.accept(op);
    Map<ByteSequence, KeyValue> pending = new LinkedHashMap<>();
    for (Current c : readSlots(op, group).values()) {
      if (c.slot().held() && which.test(c.slot())) {
        pending.put(c.kv().getKey(), c.kv());
      }
    }
    int freed = 0;
    for (int round = 0; !pending.isEmpty(); round++) {
      if (round == CAS_ROUNDS) {
        throw calls.failure(
            op, pending.size() + " leases kept changing during " + CAS_ROUNDS + " attempts");
      }
      List<KeyValue> batch = new ArrayList<>(pending.values());
      List<CompletableFuture<TxnResponse>> txns = new ArrayList<>();
      for (KeyValue c : batch) {
        txns.add(casTxn(c.getKey(), c, Values.slot(c).freed()));
      }
      List<Outcome<TxnResponse>> outcomes = calls.awaitEach(op, txns);
      pending.clear();
      StoreException failure = null;
      for (int j = 0; j < batch.size(); j++) {
        Outcome<TxnResponse> o = outcomes.get(j);
        if (!o.ok()) {
          failure = failure == null ? o.failure() : failure;
        } else if (o.value().isSucceeded()) {
          freed++;
        } else {
          KeyValue now = first(o.value().getGetResponses().get(0));
          if (now != null) {
            Slot s = Values.slot(now);
            if (s.held() && which.test(s)) {
              pending.put(now.getKey(), now);
            }
          }
        }
      }
      if (failure != null) {
        throw failure;
      }
    }
    return freed;
  }

  private record Current(KeyValue kv, Slot slot) {}

  /** Every lease key of the group (held or free), by partition: one range read. */
  private Map<PartitionKey, Current> readSlots(String op, String group) {
    ByteSequence prefix = keys.leases(group);
    GetResponse r = calls.await(op, kv.get(prefix, Keys.prefixRange(prefix)));
    Map<PartitionKey, Current> out = new HashMap<>();
    for (KeyValue e : r.getKvs()) {
      Slot s = Values.slot(e);
      out.put(s.key(), new Current(e, s));
    }
    return out;
  }

  private static KeyValue first(GetResponse r) {
    return r.getKvs().isEmpty() ? null : r.getKvs().get(0);
  }

  private static long micros(Instant t) {
    return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
  }
}
