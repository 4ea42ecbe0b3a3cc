package io.boxline.client;

import io.boxline.BoxlineException;
import java.util.Optional;

/**
 * A request to a Boxline server failed: the server answered with an error, or did not answer
 * (status 0). Carries the HTTP status, the server's error code (the {@code error} field of its JSON
 * error body: {@code bad_request}, {@code unauthorized}, {@code forbidden}, {@code not_found},
 * {@code conflict}, {@code too_large}, {@code internal}, {@code overloaded}, ...) and the server's
 * URL. The message is the server's sentence, or says what went wrong; it never holds the token.
 *
 * <p>Answers that Boxline has a type for are thrown as that type, with a {@code ServerException} as
 * their cause: 404 as {@link io.boxline.NotFoundException}, 400 and 413 as {@link
 * io.boxline.ValidationException}, a refused settle (409) as {@link
 * io.boxline.PartitionsFencedException}. {@link #of} finds the details of any of them.
 */
public class ServerException extends BoxlineException {
  private static final long serialVersionUID = 1L;

  private final int status;
  private final String errorCode;
  private final String serverUrl;

  /**
   * @param status the HTTP status, or 0 when the server did not answer
   * @param errorCode the error body's {@code error} field, or null
   * @param serverUrl the server's base URL
   */
  public ServerException(String message, int status, String errorCode, String serverUrl) {
    this(message, status, errorCode, serverUrl, null);
  }

  public ServerException(
      String message, int status, String errorCode, String serverUrl, Throwable cause) {
    super(message, cause);
    this.status = status;
    this.errorCode = errorCode;
    this.serverUrl = serverUrl;
  }

  /** The HTTP status, or 0 when the server did not answer. */
  public int status() {
    return status;
  }

  /** The server's error code ({@code error} of its JSON error body), or null without one. */
  public String errorCode() {
    return errorCode;
  }

  /** The server's base URL. */
  public String serverUrl() {
    return serverUrl;
  }

  /**
   * The details of a failure of {@link BoxlineClient}: {@code e} itself when it is a {@code
   * ServerException}, else the first one among its causes (a {@link io.boxline.NotFoundException}
   * of the client has one); empty for other failures.
   */
  public static Optional<ServerException> of(Throwable e) {
    int depth = 0;
    for (Throwable t = e; t != null && depth < 16; t = t.getCause(), depth++) {
      if (t instanceof ServerException s) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }
}
