package io.boxline;

/**
 * How a topic's events get their sequence numbers. Both keep every partition gap-free and in commit
 * order, so consumers cannot tell them apart; they differ in what producers and the database pay.
 */
public enum Sequencing {
  /**
   * Producers append to the outbox, a cheap insert that locks nothing shared; the one active
   * sequencer moves the committed rows into the log in batches. Highest throughput: producers of a
   * partition never wait for each other. An event reaches a consumer one sequencer round trip after
   * its commit. The default.
   */
  SEQUENCER,

  /**
   * The producer's own transaction numbers the events and writes them straight into the log,
   * holding the partition's row lock until it commits: producers of the same partition run one
   * after another (never two at once), and a transaction holds every partition it published to
   * until it ends. No outbox, no sequencer: an event committed through {@link
   * Boxline#inTransaction} reaches a consumer in the same process without any database round trip,
   * and one in another process with one notification. For topics where latency matters more than
   * concurrent writes to a partition; keep such transactions short, since they block the
   * partition's other producers.
   */
  IN_TRANSACTION
}
