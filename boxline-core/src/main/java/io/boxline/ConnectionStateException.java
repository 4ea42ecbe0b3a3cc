package io.boxline;

/**
 * The JDBC connection handed to Boxline cannot be used to publish: it is closed, or in auto-commit
 * mode (which would commit the event apart from the business rows and break atomic publish).
 */
public class ConnectionStateException extends BoxlineException {
  public ConnectionStateException(String message) {
    super(message);
  }
}
