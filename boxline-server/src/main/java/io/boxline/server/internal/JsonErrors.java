package io.boxline.server.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The answers Jetty gives itself, before a request reaches the router (a request line, header or
 * URL that is not valid HTTP, headers too large): the API's JSON problem, never an HTML page or a
 * stack trace.
 */
final class JsonErrors extends ErrorHandler {
  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    int status = response.getStatus();
    Object s = request.getAttribute(ERROR_STATUS);
    if (s instanceof Integer) {
      status = (Integer) s;
    }
    if (status < 400) {
      status = 500;
    }
    if (status == 505) {
      // A request line without a version (or a version not spoken): a malformed request.
      status = 400;
    }
    Object m = request.getAttribute(ERROR_MESSAGE);
    byte[] body = problem(status, m == null ? null : m.toString());
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
    response.write(true, ByteBuffer.wrap(body), callback);
    return true;
  }

  static byte[] problem(int status, String reason) {
    String message;
    switch (status) {
      case 400:
        message = "the request is not valid HTTP (request line, header or URL encoding)";
        break;
      case 408:
        message = "the request did not arrive in time";
        break;
      case 413:
        message = "the request is too large";
        break;
      case 414:
        message = "the URL is too long";
        break;
      case 431:
        message = "the request headers are too large";
        break;
      default:
        message = status >= 500 ? "the server failed" : "the request was refused";
    }
    String detail = safe(reason);
    if (detail != null && status < 500) {
      message = message + ": " + detail;
    }
    try {
      return Call.JSON.writeValueAsBytes(new Problems.Problem(status, code(status), message, null));
    } catch (Exception e) {
      return ("{\"status\":" + status + "}").getBytes(StandardCharsets.UTF_8);
    }
  }

  /** The same codes as the API's own answers. */
  private static String code(int status) {
    switch (status) {
      case 400:
        return "bad_request";
      case 404:
        return "not_found";
      case 405:
        return "method_not_allowed";
      case 408:
        return "timeout";
      case 413:
      case 414:
      case 431:
        return "too_large";
      case 503:
        return "overloaded";
      default:
        return status >= 500 ? "internal" : "bad_request";
    }
  }

  /** Jetty's own reason when it is a plain phrase; nothing that names code. */
  private static String safe(String reason) {
    if (reason == null || reason.isBlank()) {
      return null;
    }
    if (!reason.matches("[A-Za-z0-9 ,.:'()_-]{1,120}")
        || reason.contains("Exception")
        || reason.contains("java.")
        || reason.contains("org.")) {
      return null;
    }
    return reason;
  }
}
