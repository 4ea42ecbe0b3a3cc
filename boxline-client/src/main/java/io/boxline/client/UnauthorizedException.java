package io.boxline.client;

/** 401: the request had no token and the server needs one, or the server does not know it. */
public class UnauthorizedException extends ServerException {
  private static final long serialVersionUID = 1L;

  private final boolean tokenSent;

  public UnauthorizedException(
      String message, String errorCode, String serverUrl, boolean tokenSent) {
    super(message, 401, errorCode, serverUrl);
    this.tokenSent = tokenSent;
  }

  /** Whether a token was sent (and refused); false when the client has none. */
  public boolean tokenSent() {
    return tokenSent;
  }
}
