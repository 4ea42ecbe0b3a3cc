package io.boxline.server.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.boxline.BusySubscriptionException;
import io.boxline.FencedException;
import io.boxline.GroupFullException;
import io.boxline.NotFoundException;
import io.boxline.PayloadTooLargeException;
import io.boxline.ValidationException;
import java.lang.System.Logger.Level;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Matches {@code METHOD /path/{param}} routes on the raw path (so an encoded {@code %2F} stays
 * inside one parameter), authenticates, runs the handler, and turns exceptions into JSON errors.
 */
final class Router implements HttpHandler {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.http");

  @FunctionalInterface
  interface Handler {
    void handle(Call call) throws Exception;
  }

  /** One route: method, pattern, whether it needs a token, what it does. */
  record Route(String method, String pattern, boolean open, Handler handler, List<String> parts) {
    Route(String method, String pattern, boolean open, Handler handler) {
      this(method, pattern, open, handler, List.of(pattern.substring(1).split("/", -1)));
    }
  }

  private final List<Route> routes = new ArrayList<>();
  private final Auth auth;
  private final int maxBodyBytes;
  private volatile boolean closing;
  private final java.util.concurrent.atomic.AtomicInteger active =
      new java.util.concurrent.atomic.AtomicInteger();

  Router(Auth auth, int maxBodyBytes) {
    this.auth = auth;
    this.maxBodyBytes = maxBodyBytes;
  }

  void add(String method, String pattern, Handler handler) {
    routes.add(new Route(method, pattern, false, handler));
  }

  void addOpen(String method, String pattern, Handler handler) {
    routes.add(new Route(method, pattern, true, handler));
  }

  List<Route> routes() {
    return List.copyOf(routes);
  }

  /** Requests that arrive from now on get 503 (the server is shutting down). */
  void closing() {
    closing = true;
  }

  /** Requests being answered now (tail streams included). */
  int active() {
    return active.get();
  }

  @Override
  public void handle(HttpExchange exchange) {
    long t0 = System.nanoTime();
    String method = exchange.getRequestMethod();
    String rawPath = exchange.getRequestURI().getRawPath();
    Call call = null;
    int status = 500;
    String callerName = "-";
    active.incrementAndGet();
    try {
      if (closing) {
        throw new ApiException(
            503, "shutting_down", "the server is shutting down; retry on another instance");
      }
      String[] given =
          rawPath.length() > 1 ? rawPath.substring(1).split("/", -1) : new String[] {""};
      Route match = null;
      Map<String, String> params = null;
      Set<String> allowed = new TreeSet<>();
      for (Route r : routes) {
        Map<String, String> p = match(r.parts(), given);
        if (p == null) {
          continue;
        }
        if (r.method().equals(method)) {
          match = r;
          params = p;
          break;
        }
        allowed.add(r.method());
      }
      if (match == null) {
        if (!allowed.isEmpty()) {
          exchange.getResponseHeaders().set("Allow", String.join(", ", allowed));
          throw new ApiException(
              405,
              "method_not_allowed",
              method + " is not allowed here; use " + String.join(" or ", allowed));
        }
        throw ApiException.notFound(
            "no endpoint " + method + " " + rawPath + "; see /openapi.json");
      }
      Auth.Caller caller =
          match.open()
              ? null
              : auth.authenticate(exchange.getRequestHeaders().getFirst("Authorization"));
      callerName = caller == null ? "-" : caller.name;
      call = new Call(exchange, params, caller, maxBodyBytes);
      match.handler().handle(call);
      status = exchange.getResponseCode();
    } catch (Throwable e) {
      ApiException api = translate(e);
      status = api.status;
      if (api.status >= 500 && api.status != 503) {
        LOG.log(Level.ERROR, "http " + method + " " + rawPath + " failed", e);
      }
      if (call == null || !call.answered) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", api.status);
        body.put("error", api.code);
        body.put("message", api.getMessage());
        Call answer = call != null ? call : new Call(exchange, Map.of(), null, maxBodyBytes);
        answer.json(api.status, body);
      }
    } finally {
      active.decrementAndGet();
      exchange.close();
      if (LOG.isLoggable(Level.DEBUG)) {
        LOG.log(
            Level.DEBUG,
            String.format(
                "http method=%s path=%s status=%d caller=%s ms=%.1f",
                method, rawPath, status, callerName, (System.nanoTime() - t0) / 1e6));
      }
    }
  }

  static ApiException translate(Throwable e) {
    if (e instanceof ApiException) {
      return (ApiException) e;
    }
    if (e instanceof PayloadTooLargeException) {
      PayloadTooLargeException p = (PayloadTooLargeException) e;
      return new ApiException(
          413,
          "too_large",
          "an event's payload is "
              + p.size()
              + " bytes; this server accepts at most "
              + p.limit()
              + " bytes per event");
    }
    if (e instanceof ValidationException || e instanceof io.boxline.server.ConfigException) {
      return ApiException.badRequest(e.getMessage());
    }
    if (e instanceof NotFoundException) {
      return ApiException.notFound(e.getMessage());
    }
    if (e instanceof BusySubscriptionException
        || e instanceof FencedException
        || e instanceof GroupFullException) {
      return ApiException.conflict(e.getMessage());
    }
    return new ApiException(
        500,
        "internal",
        "the server failed: "
            + e.getClass().getSimpleName()
            + (e.getMessage() == null ? "" : ": " + e.getMessage()));
  }

  private static Map<String, String> match(List<String> pattern, String[] given) {
    if (pattern.size() != given.length) {
      return null;
    }
    Map<String, String> params = new HashMap<>();
    for (int i = 0; i < given.length; i++) {
      String p = pattern.get(i);
      String g;
      try {
        g = URLDecoder.decode(given[i].replace("+", "%2B"), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return null;
      }
      if (p.startsWith("{")) {
        if (g.isEmpty()) {
          return null;
        }
        params.put(p.substring(1, p.length() - 1), g);
      } else if (!p.equals(given[i])) {
        return null;
      }
    }
    return params;
  }
}
