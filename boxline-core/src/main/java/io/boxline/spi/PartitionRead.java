package io.boxline.spi;

/**
 * A read of one partition of the log: up to {@code limit} events after {@code afterSequence}, in
 * order (see {@link CursorStore#readEach}).
 */
public record PartitionRead(long topicId, int partition, long afterSequence, int limit) {
  public PartitionRead {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
  }
}
