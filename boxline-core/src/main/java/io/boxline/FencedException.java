package io.boxline;

/**
 * A cursor commit was rejected because another consumer took the partition (its lease epoch moved
 * on).
 */
public class FencedException extends BoxlineException {
  public FencedException(String message) {
    super(message);
  }
}
