package io.boxline;

import java.time.Instant;

/**
 * The dead letters of one subscription that failed for the same reason: what an operator reads
 * first when thousands of events died, instead of paging through them one by one.
 *
 * @param reason the first {@value #MAX_LENGTH} characters of the last error (class name and
 *     message); dead letters whose errors share them are one group. Pass it as {@link
 *     DeadLetterQuery#errorContains(String)} to list or redrive the group.
 * @param count how many dead letters have it
 * @param firstDeadAt when the first of them died
 * @param lastDeadAt when the last of them died
 */
public record DeadLetterReason(String reason, long count, Instant firstDeadAt, Instant lastDeadAt) {
  /** Errors are grouped by this many leading characters. */
  public static final int MAX_LENGTH = 200;
}
