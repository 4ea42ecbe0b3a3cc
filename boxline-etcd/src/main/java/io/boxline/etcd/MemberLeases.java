package io.boxline.etcd;

import io.boxline.StoreException;
import io.boxline.etcd.internal.Calls;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/**
 * The etcd leases that keep this client's member keys alive, one per (group, member): granted on
 * the first check-in, renewed with each one, replaced when the TTL changes or etcd let it expire,
 * revoked when the member leaves or the store closes. Apart from {@link EtcdCoordination} because
 * this is the one piece of state the store keeps between calls.
 */
final class MemberLeases {
  private final Lease leaseClient;
  private final Calls calls;

  /** This client's etcd lease per (group, member) it checks in for. */
  private final ConcurrentHashMap<String, MemberLease> leases = new ConcurrentHashMap<>();

  /** The etcd lease that keeps one member key alive; guarded by its own monitor. */
  private static final class MemberLease {
    long id;
    long ttlSeconds;
  }

  MemberLeases(Lease leaseClient, Calls calls) {
    this.leaseClient = leaseClient;
    this.calls = calls;
  }

  /**
   * Sends {@code write} (which puts the member key on the etcd lease it is given) on the member's
   * etcd lease of {@code ttlSeconds}, and returns its answer. With a live lease of that TTL, renews
   * it and writes together: one round trip of latency. Otherwise (first check-in, changed TTL,
   * expired lease) grants a new etcd lease first and revokes the old one.
   */
  TxnResponse write(
      String op,
      String group,
      String member,
      long ttlSeconds,
      LongFunction<CompletableFuture<TxnResponse>> write) {
    MemberLease lease = leases.computeIfAbsent(leaseKey(group, member), k -> new MemberLease());
    synchronized (lease) {
      TxnResponse read = null;
      if (lease.id != 0 && lease.ttlSeconds == ttlSeconds) {
        // Renew and write+read together: one round trip of latency.
        CompletableFuture<LeaseKeepAliveResponse> renewal = leaseClient.keepAliveOnce(lease.id);
        CompletableFuture<TxnResponse> txn = write.apply(lease.id);
        boolean expired = false;
        try {
          read = calls.await(op, txn);
        } catch (StoreException e) {
          if (!Calls.leaseNotFound(e)) {
            renewal.cancel(true);
            throw e;
          }
          expired = true;
        }
        try {
          expired |= calls.await(op + " keep-alive", renewal).getTTL() <= 0;
        } catch (StoreException e) {
          if (!Calls.leaseNotFound(e)) {
            throw e;
          }
          expired = true;
        }
        if (expired) {
          // The member missed its deadline (its key is gone); rejoin with a new etcd lease.
          lease.id = 0;
          read = null;
        }
      }
      if (read == null) {
        long previous = lease.id;
        lease.id = calls.await(op + " lease grant", leaseClient.grant(ttlSeconds)).getID();
        lease.ttlSeconds = ttlSeconds;
        read = calls.await(op, write.apply(lease.id));
        if (previous != 0) {
          // The key moved to the new etcd lease; the old one holds nothing any more.
          revokeQuietly(previous);
        }
      }
      return read;
    }
  }

  /** The member left: revokes its etcd lease without waiting. */
  void forget(String group, String member) {
    MemberLease lease = leases.remove(leaseKey(group, member));
    if (lease != null) {
      synchronized (lease) {
        if (lease.id != 0) {
          revokeQuietly(lease.id);
          lease.id = 0;
        }
      }
    }
  }

  /** The store closes: revokes every etcd lease; the caller waits for the answers it wants. */
  List<CompletableFuture<?>> revokeAll() {
    List<CompletableFuture<?>> revocations = new ArrayList<>();
    for (MemberLease l : leases.values()) {
      synchronized (l) {
        if (l.id != 0) {
          revocations.add(leaseClient.revoke(l.id));
          l.id = 0;
        }
      }
    }
    leases.clear();
    return revocations;
  }

  private void revokeQuietly(long leaseId) {
    leaseClient
        .revoke(leaseId)
        .orTimeout(calls.timeout().toMillis(), TimeUnit.MILLISECONDS)
        .exceptionally(e -> null);
  }

  private static String leaseKey(String group, String member) {
    return group + '\u0000' + member;
  }
}
