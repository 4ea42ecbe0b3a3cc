package io.boxline;

/**
 * Root of every exception Boxline throws. All are unchecked; subclasses carry the context needed to
 * act on them (the SQL that failed, the name that was rejected, ...).
 */
public class BoxlineException extends RuntimeException {
  public BoxlineException(String message) {
    super(message);
  }

  public BoxlineException(String message, Throwable cause) {
    super(message, cause);
  }
}
