package io.boxline;

import java.time.Instant;

/**
 * An event a subscription gave up on, with its failure history.
 *
 * @param subscription the subscription that dead-lettered it
 * @param event the event, payload included
 * @param attempts handler attempts made
 * @param lastError the last failure's message (class name and message)
 * @param firstFailedAt first failure
 * @param deadAt when it was dead-lettered
 */
public record DeadLetter(
    String subscription,
    Event event,
    int attempts,
    String lastError,
    Instant firstFailedAt,
    Instant deadAt) {}
