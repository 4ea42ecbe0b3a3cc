package io.boxline.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * HAProxy from Debian in front of server instances: round robin over HTTP, a health check on {@code
 * /health/live} every 500 ms, a failed connection sent to the next server ({@code option
 * redispatch}); a request that reached a server that died is answered 502, as a real load balancer
 * does, and the client decides.
 */
final class Haproxy implements AutoCloseable {
  private static final Path BINARY = Path.of("/usr/sbin/haproxy");
  private final Process process;
  private final Path dir;
  final String base;

  private Haproxy(Process process, Path dir, String base) {
    this.process = process;
    this.dir = dir;
    this.base = base;
  }

  /** HAProxy on a free port of 127.0.0.1 before {@code servers} (their base URLs). */
  static Haproxy start(List<String> servers) throws IOException, InterruptedException {
    if (!Files.isExecutable(BINARY)) {
      throw new IllegalStateException(
          "HAProxy is not installed: apt-get install -y haproxy (.ci/run installs it)");
    }
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    StringBuilder cfg =
        new StringBuilder(
            """
            global
              maxconn 2000
            defaults
              mode http
              timeout connect 2s
              timeout client 60s
              timeout server 60s
              retries 2
              option redispatch
            frontend boxline
              bind 127.0.0.1:%d
              default_backend servers
            backend servers
              balance roundrobin
              option httpchk GET /health/live
              default-server inter 500ms fall 2 rise 2
            """
                .formatted(port));
    for (int i = 0; i < servers.size(); i++) {
      URI u = URI.create(servers.get(i));
      cfg.append("  server s")
          .append(i)
          .append(' ')
          .append(u.getHost())
          .append(':')
          .append(u.getPort())
          .append(" check\n");
    }
    Path dir = Files.createTempDirectory("boxline-haproxy");
    Path file = dir.resolve("haproxy.cfg");
    Files.writeString(file, cfg, StandardCharsets.UTF_8);
    Process p =
        new ProcessBuilder(BINARY.toString(), "-db", "-f", file.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("haproxy.log").toFile())
            .start();
    Haproxy h = new Haproxy(p, dir, "http://127.0.0.1:" + port);
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return h;
      } catch (IOException notYet) {
        if (!p.isAlive() || System.nanoTime() > deadline) {
          String log = h.log();
          h.close();
          throw new IllegalStateException("HAProxy did not start: " + log);
        }
        Thread.sleep(20); // polling a port, bounded above
      }
    }
  }

  String log() {
    try {
      return Files.readString(dir.resolve("haproxy.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
    }
  }
}
