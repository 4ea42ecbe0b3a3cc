package io.boxline;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Thrown by a {@link BatchHandler} that handled part of a batch: the events named here failed (each
 * with its cause, which may be a {@link HandlerDecision}); every other event of the batch counts as
 * handled. Only the failed ones are retried, one by one.
 */
public final class BatchFailure extends BoxlineException {
  private final Map<UUID, RuntimeException> failed;

  private BatchFailure(Map<UUID, RuntimeException> failed) {
    super(failed.size() + " events of the batch failed", null);
    this.failed = Map.copyOf(failed);
  }

  /** Starts a report: {@code BatchFailure.builder().failed(event, cause)...build()}. */
  public static Builder builder() {
    return new Builder();
  }

  /** Failed event ids and their causes. */
  public Map<UUID, RuntimeException> failed() {
    return failed;
  }

  /** Collects failed events. */
  public static final class Builder {
    private final Map<UUID, RuntimeException> failed = new LinkedHashMap<>();

    public Builder failed(Event event, RuntimeException cause) {
      failed.put(event.id(), cause == null ? new BoxlineException("failed") : cause);
      return this;
    }

    public boolean isEmpty() {
      return failed.isEmpty();
    }

    public BatchFailure build() {
      if (failed.isEmpty()) {
        throw new ValidationException("a BatchFailure must name at least one failed event");
      }
      return new BatchFailure(failed);
    }
  }
}
