package io.boxline.webhook;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/** A local HTTP endpoint whose answers a test scripts; restartable on the same port. */
final class TestEndpoint implements AutoCloseable {
  /** One received request. */
  record Request(Headers headers, byte[] body) {
    String header(String name) {
      return headers.getFirst(name);
    }

    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** The answer: a status, and null as the body for none. */
  record Response(int status, String body) {
    static final Response OK = new Response(204, null);
  }

  private final Function<Request, Response> behaviour;
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private HttpServer server;
  private int port;

  TestEndpoint(Function<Request, Response> behaviour) {
    this.behaviour = behaviour;
  }

  synchronized TestEndpoint start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
    server.createContext("/hooks", this::handle);
    server.setExecutor(executor);
    server.start();
    port = server.getAddress().getPort();
    return this;
  }

  synchronized void stop() {
    server.stop(0);
  }

  URI url() {
    return URI.create("http://127.0.0.1:" + port + "/hooks");
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      byte[] body;
      try (InputStream in = ex.getRequestBody()) {
        body = in.readAllBytes();
      }
      Response r;
      try {
        r = behaviour.apply(new Request(ex.getRequestHeaders(), body));
      } catch (RuntimeException e) {
        r = new Response(500, "test endpoint failed: " + e);
      }
      if (r == null) {
        return; // the behaviour gave up on the exchange (simulated hang-up)
      }
      byte[] out = r.body() == null ? new byte[0] : r.body().getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(r.status(), out.length == 0 ? -1 : out.length);
      if (out.length > 0) {
        try (OutputStream os = ex.getResponseBody()) {
          os.write(out);
        }
      }
    }
  }

  @Override
  public synchronized void close() {
    if (server != null) {
      server.stop(0);
    }
    executor.shutdownNow();
  }
}
