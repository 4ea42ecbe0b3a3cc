package io.boxline;

/**
 * Bad input: a name, a setting or an argument that Boxline refuses. The message says what to
 * change.
 */
public class ValidationException extends BoxlineException {
  public ValidationException(String message) {
    super(message);
  }
}
