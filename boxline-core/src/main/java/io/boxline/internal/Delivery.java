package io.boxline.internal;

import io.boxline.Event;
import io.boxline.spi.Resolution;
import java.util.List;

/**
 * How a consumer's handler gets a partition's events: {@link PlainDelivery} (the handler, then the
 * cursor in the group commit) or {@link TransactionalDelivery} (the handler's writes and the
 * settlement in one transaction). The consumer picks one when it is built; its parts call this.
 */
interface Delivery {
  /**
   * Delivers {@code batch}, read after the cursor of {@code p} (or handed over in memory when
   * {@code handedOver}), and settles it; false when the partition was lost or must be read again.
   *
   * @param started the group commit's expectation of this delivery's move, or null; closed here
   */
  boolean deliver(
      LeasedPartition p, List<Event> batch, boolean handedOver, CursorCommitter.Expected started);

  /** One attempt at the parked event {@code e} of {@code p}, its {@code attempt}-th. */
  Retry retry(LeasedPartition p, Event e, int attempt);

  /**
   * What an attempt at a parked event came to.
   *
   * @param toRecord the resolution the retry pass records with the others of its page, or null
   * @param handled the attempt succeeded and recorded itself (a transactional handler's commit)
   * @param lost the partition was lost or its cursor moved: the pass stops
   */
  record Retry(Resolution toRecord, boolean handled, boolean lost) {
    static final Retry HANDLED = new Retry(null, true, false);
    static final Retry LOST = new Retry(null, false, true);

    static Retry record(Resolution r) {
      return new Retry(r, false, false);
    }
  }
}
