package io.boxline.server.internal;

import io.boxline.Admin;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.TopicName;
import java.time.Instant;
import java.util.List;

/**
 * Finds where a time falls in a partition by bisecting on sequence numbers: about 2·log₂(head)
 * single-row reads on the log's primary key, so a partition of millions answers in a few dozen
 * index lookups. Creation times follow sequence order closely but not strictly (publishers' clocks,
 * transactions that commit late), so the answer is the first event of the bisection, not a scan.
 */
final class TimeSeek {
  private TimeSeek() {}

  /**
   * The sequence to browse "after" so that the first event shown is the first created at or past
   * {@code time}.
   */
  static long before(Admin admin, TopicName topic, int partition, Instant time) {
    long head = admin.topicState(topic).heads().get(partition);
    long lo = 0;
    long hi = head;
    // Invariant: the first event after hi (if any) was created at or past time, or there is none.
    while (lo < hi) {
      long mid = lo + (hi - lo) / 2;
      Event first = firstAfter(admin, topic, partition, mid);
      if (first == null || !first.createdAt().isBefore(time)) {
        hi = mid;
      } else {
        lo = first.sequence();
      }
    }
    return lo;
  }

  private static Event firstAfter(Admin admin, TopicName topic, int partition, long after) {
    List<Event> one = admin.events(EventQuery.of(topic, partition).after(after).limit(1));
    return one.isEmpty() ? null : one.get(0);
  }
}
