package io.boxline.server.internal;

/**
 * An HTTP error answer: status, a short machine-readable code and a sentence that names the fix.
 */
public final class ApiException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  final int status;
  final String code;

  ApiException(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  static ApiException badRequest(String message) {
    return new ApiException(400, "bad_request", message);
  }

  static ApiException notFound(String message) {
    return new ApiException(404, "not_found", message);
  }

  static ApiException forbidden(String message) {
    return new ApiException(403, "forbidden", message);
  }

  static ApiException conflict(String message) {
    return new ApiException(409, "conflict", message);
  }
}
