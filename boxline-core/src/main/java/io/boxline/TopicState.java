package io.boxline;

import java.util.List;

/**
 * A topic as it stands: what it is, how long it keeps its events, and how far each partition's log
 * has grown.
 *
 * @param topic the topic's name, id, partition count and sequencing
 * @param retention how long it keeps its events ({@link RetentionPolicy#forever()} by default)
 * @param heads each partition's last sequence, by partition (0 when it holds no event yet)
 */
public record TopicState(TopicInfo topic, RetentionPolicy retention, List<Long> heads) {
  public TopicState {
    heads = List.copyOf(heads);
  }

  /** Events the topic has received in all, over every partition. */
  public long events() {
    return heads.stream().mapToLong(Long::longValue).sum();
  }
}
