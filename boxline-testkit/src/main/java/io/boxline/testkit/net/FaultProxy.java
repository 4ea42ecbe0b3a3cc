package io.boxline.testkit.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy between a client (a Boxline process's connection pool) and a server (the database)
 * that injects the network's faults on command, for tests that cut real sockets:
 *
 * <ul>
 *   <li>{@link #blackhole()}: nothing moves either way, but every connection stays open, as when a
 *       link or a firewall drops packets: the client waits, the server still holds its locks and
 *       leases. {@link #heal()} lets the held bytes through, as TCP's retransmission would;
 *   <li>{@link #resetAll()}: every open connection is reset (RST) at once, both sides;
 *   <li>{@link #resetAfterReplyTo(String)}: the next time the client sends bytes containing a
 *       marker (such as {@code COMMIT}), they reach the server, its answer is dropped and the
 *       client's connection reset: the client cannot know whether the statement took effect;
 *   <li>{@link #latency(Duration)}: each chunk waits this long before it is passed on, both ways;
 *   <li>{@link #bandwidth(long)}: at most this many bytes per second each way per connection.
 * </ul>
 *
 * Each connection has two named daemon threads; {@link #close()} closes everything.
 */
public final class FaultProxy implements AutoCloseable {
  private final String targetHost;
  private final int targetPort;
  private final ServerSocket listener;
  private final Thread acceptor;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private final Object gate = new Object();
  private volatile boolean blackholed;
  private volatile long latencyNanos;
  private volatile long bytesPerSecond;
  private final List<String> resetMarkers = new CopyOnWriteArrayList<>();
  private final AtomicInteger connections = new AtomicInteger();
  private final AtomicInteger resets = new AtomicInteger();
  private final AtomicLong forwarded = new AtomicLong();
  private volatile boolean closed;

  private FaultProxy(String targetHost, int targetPort) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    this.acceptor = new Thread(this::accept, "fault-proxy-accept-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A proxy on a free loopback port, forwarding to {@code host:port}. */
  public static FaultProxy start(String host, int port) {
    try {
      return new FaultProxy(host, port);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the fault proxy's port", e);
    }
  }

  public String host() {
    return listener.getInetAddress().getHostAddress();
  }

  public int port() {
    return listener.getLocalPort();
  }

  /**
   * {@code jdbcUrl} with its first {@code //host:port} replaced by this proxy's, for a pool whose
   * connections go through it.
   */
  public String jdbcUrlThrough(String jdbcUrl) {
    return jdbcUrl.replaceFirst("//[^/]+/", "//" + host() + ":" + port() + "/");
  }

  /** Stops all traffic both ways until {@link #heal()}; connections stay open. */
  public void blackhole() {
    blackholed = true;
  }

  /** Ends every fault: held traffic flows again, without latency or bandwidth limit. */
  public void heal() {
    latencyNanos = 0;
    bytesPerSecond = 0;
    resetMarkers.clear();
    armedBy = null;
    synchronized (gate) {
      blackholed = false;
      gate.notifyAll();
    }
  }

  public void latency(Duration perChunk) {
    latencyNanos = perChunk.toNanos();
  }

  public void bandwidth(long bytesPerSecond) {
    this.bytesPerSecond = bytesPerSecond;
  }

  /**
   * Arms a one-shot fault: the next chunk from a client that contains {@code marker} (ISO-8859-1)
   * reaches the server, or the next answer from the server that contains it (PostgreSQL names the
   * command it completed, {@code COMMIT}, even when the client sent a prepared statement's name);
   * that answer is dropped and both sides of the connection are reset.
   */
  public void resetAfterReplyTo(String marker) {
    resetAfterReplyTo(null, marker);
  }

  /**
   * {@link #resetAfterReplyTo(String)} on the connection that first sends {@code armedBy} (a
   * statement only the call under test makes, such as the table it inserts into), so that the
   * background loops' own commits on other connections pass.
   */
  public void resetAfterReplyTo(String armedBy, String marker) {
    this.armedBy = armedBy;
    resetMarkers.add(marker);
  }

  private volatile String armedBy;

  /** Resets every open connection now; how many there were. */
  public int resetAll() {
    int n = 0;
    for (Link l : links) {
      l.reset();
      n++;
    }
    return n;
  }

  /** Connections accepted so far. */
  public int connections() {
    return connections.get();
  }

  /** Connections reset by {@link #resetAll} or a marker. */
  public int resets() {
    return resets.get();
  }

  /** Bytes passed on, both ways. */
  public long bytesForwarded() {
    return forwarded.get();
  }

  public int openConnections() {
    return links.size();
  }

  private void accept() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      try {
        Socket server = new Socket(targetHost, targetPort);
        client.setTcpNoDelay(true);
        server.setTcpNoDelay(true);
        Link l = new Link(client, server, connections.incrementAndGet());
        links.add(l);
        l.start();
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  /** One proxied connection: a client socket, a server socket and a pump each way. */
  private final class Link {
    final Socket client;
    final Socket server;
    final int id;
    volatile boolean dropReplies;
    volatile boolean armed;

    Link(Socket client, Socket server, int id) {
      this.client = client;
      this.server = server;
      this.id = id;
    }

    void start() throws IOException {
      pump(client.getInputStream(), server.getOutputStream(), true, "up");
      pump(server.getInputStream(), client.getOutputStream(), false, "down");
    }

    private void pump(InputStream in, OutputStream out, boolean fromClient, String way) {
      Thread t =
          new Thread(
              () -> {
                byte[] buf = new byte[16 * 1024];
                try {
                  int n;
                  while ((n = in.read(buf)) >= 0) {
                    holdWhileBlackholed();
                    delay(n);
                    if (!fromClient && (dropReplies || answersMarker(buf, n))) {
                      reset();
                      return;
                    }
                    if (fromClient && !resetMarkers.isEmpty()) {
                      String text = new String(buf, 0, n, StandardCharsets.ISO_8859_1);
                      String arm = armedBy;
                      if (arm == null || text.contains(arm)) {
                        armed = true;
                      }
                      for (String marker : resetMarkers) {
                        if (armed && text.contains(marker) && resetMarkers.remove(marker)) {
                          dropReplies = true;
                          break;
                        }
                      }
                    }
                    forwarded.addAndGet(
                        n); // before the write, so a reader of the bytes sees them counted
                    out.write(buf, 0, n);
                    out.flush();
                  }
                } catch (IOException | InterruptedException e) {
                  // the other pump or a fault closed the link
                } finally {
                  close();
                }
              },
              "fault-proxy-" + id + "-" + way);
      t.setDaemon(true);
      t.start();
    }

    /**
     * Whether an armed marker appears in the server's answer (PostgreSQL's command tag, say, when
     * the statement's text was sent earlier as a prepared statement): then the answer is dropped.
     */
    private boolean answersMarker(byte[] buf, int n) {
      if (resetMarkers.isEmpty() || !armed) {
        return false;
      }
      String text = new String(buf, 0, n, StandardCharsets.ISO_8859_1);
      for (String marker : resetMarkers) {
        if (text.contains(marker) && resetMarkers.remove(marker)) {
          return true;
        }
      }
      return false;
    }

    /** RST on both sides: SO_LINGER 0 makes close send a reset, not a FIN. */
    void reset() {
      if (links.remove(this)) {
        resets.incrementAndGet();
        for (Socket s : List.of(client, server)) {
          try {
            s.setSoLinger(true, 0);
          } catch (SocketException ignored) {
            // already closed
          }
          closeQuietly(s);
        }
      }
    }

    void close() {
      links.remove(this);
      closeQuietly(client);
      closeQuietly(server);
    }
  }

  private void holdWhileBlackholed() throws InterruptedException {
    synchronized (gate) {
      while (blackholed && !closed) {
        gate.wait(100);
      }
    }
  }

  private void delay(int bytes) throws InterruptedException {
    long nanos = latencyNanos;
    long bps = bytesPerSecond;
    if (bps > 0) {
      nanos += bytes * 1_000_000_000L / bps;
    }
    if (nanos > 0) {
      Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() {
    closed = true;
    heal();
    closeQuietly2(listener);
    for (Link l : links) {
      l.close();
    }
  }

  private static void closeQuietly2(ServerSocket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }
}
