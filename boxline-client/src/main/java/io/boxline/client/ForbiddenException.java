package io.boxline.client;

/**
 * 403: the token's role may not do this, or the namespace is not among the token's (for a token of
 * some namespaces only, also a subscription that does not exist).
 */
public class ForbiddenException extends ServerException {
  private static final long serialVersionUID = 1L;

  public ForbiddenException(String message, String errorCode, String serverUrl) {
    super(message, 403, errorCode, serverUrl);
  }
}
