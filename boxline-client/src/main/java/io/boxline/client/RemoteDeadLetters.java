package io.boxline.client;

import io.boxline.DeadLetterQuery;
import io.boxline.DeadLetters;

/**
 * {@link DeadLetters} over a Boxline server: {@link #list} pages through {@code GET
 * …/dead-letters}; redrive and discard send the query's filters to {@code POST
 * …/dead-letters/redrive|discard}, which act in one call as the library does.
 */
public interface RemoteDeadLetters extends DeadLetters {
  /** How many dead letters {@link #redrive} would send back: the server's dry run, one request. */
  int count(DeadLetterQuery query);
}
