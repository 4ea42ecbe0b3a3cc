package io.boxline.server.internal;

import io.boxline.BusySubscriptionException;
import io.boxline.FencedException;
import io.boxline.GroupFullException;
import io.boxline.NotFoundException;
import io.boxline.PayloadTooLargeException;
import io.boxline.ValidationException;
import java.lang.System.Logger.Level;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;

/**
 * Matches {@code METHOD /path/{param}} routes on the raw path (so an encoded {@code %2F} stays
 * inside one parameter), authenticates, runs the handler, and turns exceptions into JSON errors.
 */
final class Router extends Handler.Abstract.NonBlocking {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.http");

  /** One line per request, at INFO, with the request's fields as key-value pairs. */
  private static final org.slf4j.Logger ACCESS =
      org.slf4j.LoggerFactory.getLogger("io.boxline.server.access");

  /** A request id a client may choose: short, and safe in a header and a log line. */
  private static final java.util.regex.Pattern REQUEST_ID =
      java.util.regex.Pattern.compile("[A-Za-z0-9._:-]{1,64}");

  @FunctionalInterface
  interface RouteHandler {
    void handle(Call call) throws Exception;
  }

  /** One route: method, pattern, whether it needs a token, what it does. */
  record Route(
      String method,
      String pattern,
      boolean open,
      boolean inline,
      RouteHandler handler,
      List<String> parts) {
    Route(String method, String pattern, boolean open, boolean inline, RouteHandler handler) {
      this(method, pattern, open, inline, handler, List.of(pattern.substring(1).split("/", -1)));
    }
  }

  private final List<Route> routes = new ArrayList<>();
  private final Auth auth;
  private final int maxBodyBytes;
  private final Duration bodyTimeout;
  private final Executor workers;
  private volatile boolean closing;
  private final java.util.concurrent.atomic.AtomicInteger active =
      new java.util.concurrent.atomic.AtomicInteger();

  Router(Auth auth, int maxBodyBytes, Duration bodyTimeout, Executor workers) {
    this.auth = auth;
    this.maxBodyBytes = maxBodyBytes;
    this.bodyTimeout = bodyTimeout;
    this.workers = workers;
  }

  void add(String method, String pattern, RouteHandler handler) {
    routes.add(new Route(method, pattern, false, false, handler));
  }

  void addOpen(String method, String pattern, RouteHandler handler) {
    routes.add(new Route(method, pattern, true, false, handler));
  }

  /** An open route answered on the I/O thread: it must not block. */
  void addInline(String method, String pattern, RouteHandler handler) {
    routes.add(new Route(method, pattern, true, true, handler));
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
  public boolean handle(Request request, Response response, Callback callback) {
    long t0 = System.nanoTime();
    String method = request.getMethod();
    String rawPath = request.getHttpURI().getPath();
    active.incrementAndGet();
    Exchange x = new Exchange(request, response, callback, method, rawPath, t0);
    response.getHeaders().put(ApiVersion.HEADER, ApiVersion.CURRENT);
    Route match;
    Map<String, String> params;
    try {
      if (closing) {
        response.getHeaders().put("Retry-After", "1");
        throw new ApiException(
            503, "shutting_down", "the server is shutting down; retry on another instance");
      }
      String[] given =
          rawPath.length() > 1 ? rawPath.substring(1).split("/", -1) : new String[] {""};
      match = null;
      params = null;
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
          response.getHeaders().put("Allow", String.join(", ", allowed));
          throw new ApiException(
              405,
              "method_not_allowed",
              Problems.quote(method) + " is not allowed here; use " + String.join(" or ", allowed));
        }
        throw ApiException.notFound("no such endpoint; see /openapi.json for the API");
      }
      x.route = match.pattern();
      ApiVersion.check(request.getHeaders().get(ApiVersion.HEADER));
      long length = request.getLength();
      if (length > maxBodyBytes) {
        response.getHeaders().put("Connection", "close");
        throw tooLarge();
      }
    } catch (ApiException e) {
      closeUnlessBodyRead(request, response);
      x.fail(e);
      return true;
    }
    if (match.inline()) {
      // Answered on the calling thread: liveness must answer while every worker is busy.
      run(x, match, params, new byte[0]);
      return true;
    }
    Route route = match;
    Map<String, String> found = params;
    // The body is read without holding a worker thread; a client that sends it too slowly is cut
    // off after the body timeout.
    CompletableFuture<byte[]> read = new CompletableFuture<>();
    Content.Source.asByteArrayAsync(request, maxBodyBytes, Promise.Invocable.toPromise(read));
    read.orTimeout(bodyTimeout.toMillis(), TimeUnit.MILLISECONDS)
        .whenComplete(
            (body, error) -> {
              if (error != null) {
                x.fail(bodyError(error));
                return;
              }
              if (body.length > maxBodyBytes) {
                response.getHeaders().put("Connection", "close");
                x.fail(tooLarge());
                return;
              }
              try {
                workers.execute(() -> run(x, route, found, body));
              } catch (RejectedExecutionException full) {
                response.getHeaders().put("Retry-After", "1");
                x.fail(
                    new ApiException(
                        503,
                        "overloaded",
                        "the server is answering as many requests as it can (http.threads);"
                            + " retry after a second"));
              }
            });
    return true;
  }

  /**
   * Refused before its body was read: Jetty may close the connection after the answer rather than
   * wait for a body still on its way. Said in the answer, a client does not put the connection back
   * in its pool only to find it closed on the next request. The body is not touched here: the
   * request's content belongs to Jetty once the handler has answered.
   */
  private static void closeUnlessBodyRead(Request request, Response response) {
    var version = request.getConnectionMetaData().getHttpVersion();
    boolean http1 =
        version == org.eclipse.jetty.http.HttpVersion.HTTP_1_1
            || version == org.eclipse.jetty.http.HttpVersion.HTTP_1_0;
    boolean hasBody =
        request.getLength() > 0
            || request.getHeaders().contains(org.eclipse.jetty.http.HttpHeader.TRANSFER_ENCODING);
    if (http1 && hasBody) {
      response.getHeaders().put("Connection", "close");
    }
  }

  private ApiException bodyError(Throwable error) {
    Throwable e =
        error instanceof java.util.concurrent.CompletionException && error.getCause() != null
            ? error.getCause()
            : error;
    if (e instanceof java.util.concurrent.TimeoutException) {
      return new ApiException(
          408,
          "timeout",
          "the request body did not arrive within "
              + bodyTimeout.toSeconds()
              + " s (http.bodyTimeout); send it at once");
    }
    if (e instanceof IllegalStateException || e instanceof IllegalArgumentException) {
      return tooLarge(); // Jetty's "Max size exceeded"
    }
    return ApiException.badRequest("the request body could not be read");
  }

  private ApiException tooLarge() {
    return new ApiException(
        413,
        "too_large",
        "the request body is larger than "
            + maxBodyBytes
            + " bytes (http.maxBodyBytes); send fewer events per request");
  }

  /** Authenticates, runs the handler and answers; on a worker thread (or inline). */
  private void run(Exchange x, Route route, Map<String, String> params, byte[] body) {
    Call call;
    try {
      Auth.Caller caller =
          route.open() ? null : auth.authenticate(x.request.getHeaders().get("Authorization"));
      x.callerName = caller == null ? "-" : caller.name;
      call = new Call(x.request, x.response, x.callback, params, caller, body);
    } catch (Throwable e) {
      x.fail(e);
      return;
    }
    step(x, route, call, route.handler());
  }

  /**
   * Runs one step of a call's handler and answers; a step that asked to wait ({@link Call#later})
   * holds no thread: the next step is handed to a worker once the wait is over.
   */
  private void step(Exchange x, Route route, Call call, RouteHandler handler) {
    try {
      handler.handle(call);
      Call.Later later = call.takeLater();
      while (later != null && later.when().toCompletableFuture().isDone()) {
        // Already over (a commit this thread ran itself): the next step runs here, no hand-off.
        later.next().handle(call);
        later = call.takeLater();
      }
      if (later != null) {
        Call.Later waiting = later;
        waiting.when().whenComplete((v, e) -> resume(x, route, call, waiting.next()));
        return;
      }
      if (call.answered()) {
        call.finishStream();
        x.status = x.response.getStatus();
        x.logged();
      } else {
        throw new IllegalStateException("the handler of " + route.pattern() + " gave no answer");
      }
    } catch (Throwable e) {
      if (call.answered()) {
        // A stream that failed half-way: end it; the client sees the connection close.
        LOG.log(Level.DEBUG, "http " + x.method + " " + route.pattern() + " ended early", e);
        call.finishStream();
        x.logged();
        return;
      }
      x.fail(e);
    }
  }

  private void resume(Exchange x, Route route, Call call, RouteHandler next) {
    try {
      workers.execute(() -> step(x, route, call, next));
    } catch (RejectedExecutionException full) {
      x.response.getHeaders().put("Retry-After", "1");
      x.fail(
          new ApiException(
              503,
              "overloaded",
              "the server is answering as many requests as it can (http.threads); retry after a"
                  + " second"));
    }
  }

  /** One exchange's answer when it fails, and its log line. */
  private final class Exchange {
    final Request request;
    final Response response;
    final Callback callback;
    final String method;
    final String rawPath;
    final long t0;
    final String requestId;
    String callerName = "-";
    String route = "-";
    int status = 500;
    private boolean ended;

    Exchange(
        Request request,
        Response response,
        Callback callback,
        String method,
        String rawPath,
        long t0) {
      this.request = request;
      this.response = response;
      this.callback = callback;
      this.method = method;
      this.rawPath = rawPath;
      this.t0 = t0;
      String given = request.getHeaders().get("X-Request-Id");
      requestId =
          given != null && REQUEST_ID.matcher(given).matches()
              ? given
              : Long.toHexString(
                  java.util.concurrent.ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
      response.getHeaders().put("X-Request-Id", requestId);
      if (ACCESS.isInfoEnabled()) {
        // Once the answer is written (or the connection failed): the status, the bytes and the
        // duration are final then.
        Request.addCompletionListener(request, this::access);
      }
    }

    void fail(Throwable e) {
      ApiException api = translate(e);
      String correlation = null;
      if (api.status >= 500 && api.status != 503) {
        correlation = requestId;
        LOG.log(
            Level.ERROR,
            "http "
                + method
                + " "
                + Problems.quote(rawPath)
                + " failed [correlationId="
                + correlation
                + "]",
            e);
        api =
            new ApiException(
                500,
                "internal",
                "the server failed; its log has the details under correlation id " + correlation);
      }
      status = api.status;
      byte[] bytes;
      try {
        bytes =
            Call.JSON.writeValueAsBytes(
                api.refusal == null
                    ? new Problems.Problem(api.status, api.code, api.getMessage(), correlation)
                    : new Problems.Problem(
                        api.status,
                        api.code,
                        api.getMessage(),
                        correlation,
                        api.refusal.settled(),
                        api.refusal.refused()));
      } catch (Exception never) {
        bytes = "{\"status\":500,\"error\":\"internal\"}".getBytes(StandardCharsets.UTF_8);
      }
      response.setStatus(api.status);
      response.getHeaders().put("Content-Type", "application/json");
      response.getHeaders().put("Cache-Control", "no-store");
      response.getHeaders().put("Content-Length", Long.toString(bytes.length));
      response.write(true, ByteBuffer.wrap(bytes), callback);
      logged();
    }

    void logged() {
      if (ended) {
        return;
      }
      ended = true;
      active.decrementAndGet();
    }

    /** The access log's line. */
    private void access(Throwable failure) {
      long micros = (System.nanoTime() - t0) / 1000;
      int code = response.getStatus();
      var line =
          ACCESS
              .atInfo()
              .setMessage(method + " " + route + " " + code)
              .addKeyValue("requestId", requestId)
              .addKeyValue("token", callerName)
              .addKeyValue("method", method)
              .addKeyValue("route", route)
              .addKeyValue("status", code)
              .addKeyValue("durationMs", micros / 1000.0)
              .addKeyValue("bytes", Response.getContentBytesWritten(response))
              .addKeyValue("client", Request.getRemoteAddr(request));
      if (failure != null) {
        line = line.addKeyValue("failure", String.valueOf(failure.getMessage()));
      }
      line.log();
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
    if (e instanceof io.boxline.PartitionsFencedException f) {
      return new ApiException(
          409,
          "conflict",
          f.getMessage(),
          new Problems.Refusal(
              f.settled(),
              f.refused().stream()
                  .map(p -> new Problems.PartitionRef(p.topic().toString(), p.partition()))
                  .toList()));
    }
    if (e instanceof BusySubscriptionException
        || e instanceof FencedException
        || e instanceof GroupFullException) {
      return ApiException.conflict(e.getMessage());
    }
    return new ApiException(500, "internal", "the server failed");
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
