package io.boxline.client;

import io.boxline.RemoteConsumers.Batch;
import io.boxline.RemoteConsumers.Settlement;
import java.time.Duration;
import java.util.List;

/**
 * Members of a subscription's consumer group through a Boxline server (its {@code
 * …/members/{member}} routes), with the records of {@link io.boxline.RemoteConsumers}. A member
 * fetches at least every {@link Batch#checkInWithin()}, handles the events, settles them in the
 * order they came, and leaves when it stops.
 */
public interface RemoteMembers {
  /**
   * Checks {@code member} in (joining the group if new) and returns up to {@code max} events of the
   * partitions it holds, waiting up to {@code wait} for some (a long poll).
   *
   * @param weight its share of the partitions relative to the other members (1 is the usual)
   * @throws io.boxline.NotFoundException when the subscription does not exist
   * @throws ConflictException when the group has its policy's maximum of members
   */
  Batch fetch(String subscription, String member, double weight, int max, Duration wait);

  /**
   * Settles fetched events, in the order they were fetched.
   *
   * @return how many were settled
   * @throws io.boxline.PartitionsFencedException when the member no longer holds some partitions
   *     under the epoch it fetched with, or their cursors moved: it names them, and the other
   *     partitions were settled. Fetch again
   * @throws io.boxline.ValidationException when an ack id is not one fetch gave this member
   */
  int settle(String subscription, String member, List<Settlement> settlements);

  /** Leaves the group at once: its partitions are free for the others. */
  void leave(String subscription, String member);
}
