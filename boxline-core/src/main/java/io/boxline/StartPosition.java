package io.boxline;

import java.time.Instant;
import java.util.Objects;

/** Where a new subscription starts reading each partition. */
public final class StartPosition {
  private static final StartPosition EARLIEST = new StartPosition(Kind.EARLIEST, null);
  private static final StartPosition LATEST = new StartPosition(Kind.LATEST, null);

  /** The kinds of start position. */
  public enum Kind {
    EARLIEST,
    LATEST,
    TIMESTAMP
  }

  private final Kind kind;
  private final Instant timestamp;

  private StartPosition(Kind kind, Instant timestamp) {
    this.kind = kind;
    this.timestamp = timestamp;
  }

  /** Every event still in the log. */
  public static StartPosition earliest() {
    return EARLIEST;
  }

  /** Only events sequenced after the subscription is created. */
  public static StartPosition latest() {
    return LATEST;
  }

  /**
   * Events created at or after {@code timestamp}, kept to the microsecond (finer digits are
   * dropped, as the databases store it); refused outside {@link Names#MIN_INSTANT} to {@link
   * Names#MAX_INSTANT}.
   */
  public static StartPosition at(Instant timestamp) {
    return new StartPosition(
        Kind.TIMESTAMP,
        Names.requireStorable(
            "start position timestamp", Objects.requireNonNull(timestamp, "timestamp")));
  }

  /** The position of {@code kind}; {@code timestamp} is required for TIMESTAMP only. */
  public static StartPosition of(Kind kind, Instant timestamp) {
    return switch (Objects.requireNonNull(kind, "kind")) {
      case EARLIEST -> EARLIEST;
      case LATEST -> LATEST;
      case TIMESTAMP -> at(timestamp);
    };
  }

  public Kind kind() {
    return kind;
  }

  public Instant timestamp() {
    return timestamp;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StartPosition p && p.kind == kind && Objects.equals(p.timestamp, timestamp);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, timestamp);
  }

  @Override
  public String toString() {
    return kind == Kind.TIMESTAMP ? "at " + timestamp : kind.name().toLowerCase();
  }
}
