package io.boxline.server.internal;

/**
 * An HTTP error answer: status, a short machine-readable code and a sentence that names the fix.
 */
public final class ApiException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  final int status;
  final String code;

  /** For a settle with refused partitions: which, and how many events were settled; else null. */
  final transient Problems.Refusal refusal;

  ApiException(int status, String code, String message) {
    this(status, code, message, null);
  }

  ApiException(int status, String code, String message, Problems.Refusal refusal) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.refusal = refusal;
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
