package io.boxline.server.internal;

import io.boxline.server.ServerConfig;
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;

/** What the HTTP listener speaks besides plain HTTP/1.1: gzip answers and HTTP/2 cleartext. */
final class HttpStack {
  /** Smaller answers are sent as they are: compressing them saves less than it costs. */
  static final int MIN_GZIP_BYTES = 1024;

  private HttpStack() {}

  /**
   * The handler around the router: with {@code http.gzip}, answers of {@link #MIN_GZIP_BYTES} or
   * more of a compressible type go out gzipped to clients that accept it. Tail streams ({@code
   * text/event-stream}) never are: each event must reach the client when it is written.
   */
  static Handler around(Handler router, ServerConfig.Http h) {
    if (!h.gzip()) {
      return router;
    }
    GzipHandler gzip = new GzipHandler(router);
    gzip.setMinGzipSize(MIN_GZIP_BYTES);
    gzip.setIncludedMethods("GET", "POST");
    gzip.setIncludedMimeTypes(
        "application/json",
        "text/html",
        "text/css",
        "text/javascript",
        "application/javascript",
        "text/plain",
        "image/svg+xml");
    gzip.addExcludedMimeTypes("text/event-stream");
    return gzip;
  }

  /**
   * The cleartext connector's protocols: HTTP/1.1, and with {@code http.h2c} HTTP/2 as well (by
   * prior knowledge, or upgraded from HTTP/1.1 by {@code Upgrade: h2c}).
   */
  static ConnectionFactory[] cleartext(HttpConnectionFactory http11, ServerConfig.Http h) {
    if (!h.h2c()) {
      return new ConnectionFactory[] {http11};
    }
    HttpConfiguration hc = http11.getHttpConfiguration();
    return new ConnectionFactory[] {http11, new HTTP2CServerConnectionFactory(hc)};
  }
}
