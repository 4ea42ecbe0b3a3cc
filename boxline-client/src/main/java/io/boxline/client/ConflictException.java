package io.boxline.client;

/**
 * 409 (other than a refused settle, which is {@link io.boxline.PartitionsFencedException}): the
 * subscription has live consumers (a rewind, a delete without force), or the group has its policy's
 * maximum of members.
 */
public class ConflictException extends ServerException {
  private static final long serialVersionUID = 1L;

  public ConflictException(String message, String errorCode, String serverUrl) {
    super(message, 409, errorCode, serverUrl);
  }
}
