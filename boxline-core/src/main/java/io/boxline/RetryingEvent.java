package io.boxline;

import java.time.Instant;

/**
 * An event a subscription set aside that is not dead: waiting for its next attempt, or waiting
 * behind an earlier event of its key.
 *
 * @param subscription the subscription
 * @param event the event as the log holds it
 * @param behindItsKey true when it waits for an earlier event of its key (it has not failed itself)
 * @param attempts attempts made so far
 * @param nextAttemptAt when it is due next (for one behind its key: when it was set aside)
 * @param lastError the last failure's message, or null
 * @param firstFailedAt when it first failed, or null
 */
public record RetryingEvent(
    String subscription,
    Event event,
    boolean behindItsKey,
    int attempts,
    Instant nextAttemptAt,
    String lastError,
    Instant firstFailedAt) {}
