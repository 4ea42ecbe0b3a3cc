package io.boxline;

/** A topic, namespace or subscription that the call names does not exist. */
public class NotFoundException extends BoxlineException {
  public NotFoundException(String message) {
    super(message);
  }
}
