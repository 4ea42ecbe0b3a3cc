package io.boxline.spi;

import java.sql.Connection;

/** The store's role as a subscription's inbox: the keys of messages it has handled. */
public interface InboxStore {

  /**
   * In a handler's transaction: records {@code key}; false when it was recorded before (a
   * duplicate).
   */
  boolean inboxClaim(Connection tx, long subscriptionId, String key);

  boolean inboxSeen(long subscriptionId, String key);

  /** How many keys the subscription's inbox holds. */
  long inboxSize(long subscriptionId);

  /** {@link #inboxSize} of every subscription whose inbox holds keys, by subscription name. */
  java.util.Map<String, Long> inboxSizes();

  /** Records {@code key} on its own (non-transactional handlers). */
  void inboxRecord(long subscriptionId, String key);
}
