package io.boxline.client;

/**
 * The server did not answer: the connection was refused or timed out, the host is unknown, or the
 * connection broke. The message names the server's URL ("cannot connect to http://…: connection
 * refused (is the server running?)"); {@link #status()} is 0.
 */
public class CannotConnectException extends ServerException {
  private static final long serialVersionUID = 1L;

  public CannotConnectException(String message, String serverUrl, Throwable cause) {
    super(message, 0, null, serverUrl, cause);
  }
}
