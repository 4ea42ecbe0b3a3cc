package io.boxline;

/** A payload could not be encoded or decoded by its codec. */
public class SerializationException extends BoxlineException {
  public SerializationException(String message, Throwable cause) {
    super(message, cause);
  }
}
