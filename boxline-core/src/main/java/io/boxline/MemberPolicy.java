package io.boxline;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How the events that remote members of a subscription (the server's HTTP consumers) settle as
 * failed are retried and dead-lettered: the retry policy, the per-type policies, whether a dead
 * letter holds its key, and the hooks a Java consumer takes from its {@link ConsumerBuilder}. One
 * policy decides for both kinds of member, so a failure means the same whoever handled the event.
 *
 * <p>A member's RETRY counts as a failed attempt: after the policy's {@link
 * RetryPolicy#maxAttempts()} the event is dead-lettered; a member's {@code retryIn} replaces the
 * policy's backoff for that attempt. In-place attempts do not apply: a remote member retries by
 * settling.
 */
public final class MemberPolicy {
  /** {@link RetryPolicy#DEFAULT}, no per-type policies, dead letters do not hold keys, no hooks. */
  public static final MemberPolicy DEFAULT = builder().build();

  private final RetryPolicy retryPolicy;
  private final Map<String, RetryPolicy> typePolicies;
  private final boolean deadLetterBlocksKey;
  private final ConsumerHooks hooks;

  private MemberPolicy(Builder b) {
    this.retryPolicy = b.retryPolicy;
    this.typePolicies = Map.copyOf(b.typePolicies);
    this.deadLetterBlocksKey = b.deadLetterBlocksKey;
    this.hooks = b.hooks;
  }

  public static Builder builder() {
    return new Builder();
  }

  public RetryPolicy retryPolicy() {
    return retryPolicy;
  }

  /** Retry policies by event type, overriding {@link #retryPolicy()}. */
  public Map<String, RetryPolicy> typePolicies() {
    return typePolicies;
  }

  public boolean deadLetterBlocksKey() {
    return deadLetterBlocksKey;
  }

  /** Called with each failed attempt ({@code onError}) and each dead letter. */
  public ConsumerHooks hooks() {
    return hooks;
  }

  /** Settings of a {@link MemberPolicy}; each setter documents its default. */
  public static final class Builder {
    private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
    private final Map<String, RetryPolicy> typePolicies = new HashMap<>();
    private boolean deadLetterBlocksKey;
    private ConsumerHooks hooks = ConsumerHooks.NONE;

    private Builder() {}

    /** The retry policy (default {@link RetryPolicy#DEFAULT}). */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** A retry policy for one event type, overriding {@link #retryPolicy(RetryPolicy)}. */
    public Builder retryPolicy(String eventType, RetryPolicy policy) {
      if (eventType == null || eventType.isBlank()) {
        throw new ValidationException("eventType must not be blank");
      }
      typePolicies.put(eventType, Objects.requireNonNull(policy, "policy"));
      return this;
    }

    /**
     * Whether a dead letter keeps holding later events of its key until redriven or discarded
     * (default false, as for a Java consumer).
     */
    public Builder deadLetterBlocksKey(boolean blocks) {
      this.deadLetterBlocksKey = blocks;
      return this;
    }

    /** Hooks called with failed attempts and dead letters (default none). */
    public Builder hooks(ConsumerHooks hooks) {
      this.hooks = Objects.requireNonNull(hooks, "hooks");
      return this;
    }

    public MemberPolicy build() {
      return new MemberPolicy(this);
    }
  }
}
