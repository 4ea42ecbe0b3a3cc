package io.boxline.server;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Slowloris: connections that stop in the middle of a request and then send nothing, while the
 * server must go on answering, tenant A included.
 */
final class SlowConnections {
  final RawHttp raw;
  final String aAdminSecret;

  SlowConnections(RawHttp raw, String aAdminSecret) {
    this.raw = raw;
    this.aAdminSecret = aAdminSecret;
  }

  /** Opens 64 connections that send {@code partial} and then nothing; /health/live must answer. */
  void slowloris(AttackFailures failures, String what, byte[] partial) throws Exception {
    List<Socket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < 64; i++) {
        Socket s = new Socket(raw.host, raw.port);
        s.getOutputStream().write(partial);
        s.getOutputStream().flush();
        sockets.add(s);
      }
      Thread.sleep(500);
      long t0 = System.nanoTime();
      RawHttp.Response live = raw.send(new RawHttp.Request("GET", "/health/live"), 3_000, 0);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      if (live.status != 200) {
        failures.add(
            -1,
            "slowloris",
            "slowloris: " + what,
            "64 connections each sending "
                + RawHttp.truncate(new String(partial, StandardCharsets.ISO_8859_1), 200)
                + " and then nothing; then GET /health/live",
            live.toString(),
            "/health/live did not answer 200 within 3 s ("
                + ms
                + " ms) while 64 connections stalled in "
                + what);
      }
      // Tenant A's own call must get through too.
      RawHttp.Response aCall =
          raw.send(
              new RawHttp.Request("GET", "/v1/topics")
                  .header("Authorization", "Bearer " + aAdminSecret),
              3_000,
              0);
      if (aCall.status != 200) {
        failures.add(
            -1,
            "slowloris",
            "slowloris: " + what,
            "tenant A's GET /v1/topics while 64 connections stalled in " + what,
            aCall.toString(),
            "tenant A was not served within 3 s");
      }
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
    // Freed: the server answers again soon.
    RawHttp.Response again = raw.send(new RawHttp.Request("GET", "/health/live"), 10_000, 0);
    if (again.status != 200) {
      failures.add(
          -1,
          "server-down-after",
          "slowloris: " + what,
          "GET /health/live after closing the slow connections",
          again.toString(),
          "no answer after the slow connections closed");
    }
  }
}
