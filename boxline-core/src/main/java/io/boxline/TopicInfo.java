package io.boxline;

import java.time.Instant;

/** A topic as stored. */
public record TopicInfo(
    TopicName name, long id, int partitions, Instant createdAt, Sequencing sequencing) {

  /** A topic sequenced by the sequencer ({@link Sequencing#SEQUENCER}). */
  public TopicInfo(TopicName name, long id, int partitions, Instant createdAt) {
    this(name, id, partitions, createdAt, Sequencing.SEQUENCER);
  }
}
