package io.boxline.testkit.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link FaultProxy} in front of an echo server on real sockets: each fault, then healed. */
class FaultProxyTest {
  private ServerSocket echo;
  private FaultProxy proxy;

  @BeforeEach
  void start() throws IOException {
    echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t =
        new Thread(
            () -> {
              while (!echo.isClosed()) {
                try {
                  Socket s = echo.accept();
                  Thread c =
                      new Thread(
                          () -> {
                            try (s;
                                InputStream in = s.getInputStream();
                                OutputStream out = s.getOutputStream()) {
                              in.transferTo(out);
                            } catch (IOException ignored) {
                              // the client went away
                            }
                          });
                  c.setDaemon(true);
                  c.start();
                } catch (IOException e) {
                  return;
                }
              }
            });
    t.setDaemon(true);
    t.start();
    proxy = FaultProxy.start("127.0.0.1", echo.getLocalPort());
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    echo.close();
  }

  private Socket connect() throws IOException {
    Socket s = new Socket(proxy.host(), proxy.port());
    s.setSoTimeout(5_000);
    return s;
  }

  private static String roundTrip(Socket s, String text) throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    s.getOutputStream().write(bytes);
    s.getOutputStream().flush();
    return new String(s.getInputStream().readNBytes(bytes.length), StandardCharsets.UTF_8);
  }

  @Test
  void forwardsBothWaysAndRewritesJdbcUrls() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "hello")).isEqualTo("hello");
    }
    assertThat(proxy.connections()).isEqualTo(1);
    assertThat(proxy.bytesForwarded()).isEqualTo(10);
    assertThat(proxy.jdbcUrlThrough("jdbc:postgresql://db.example:5432/app?ssl=false"))
        .isEqualTo("jdbc:postgresql://" + proxy.host() + ":" + proxy.port() + "/app?ssl=false");
  }

  @Test
  void aBlackholeHoldsTrafficWithTheConnectionOpenUntilHealed() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "a")).isEqualTo("a");
      proxy.blackhole();
      s.setSoTimeout(500);
      s.getOutputStream().write('b');
      assertThatThrownBy(() -> s.getInputStream().read())
          .isInstanceOf(SocketTimeoutException.class);
      assertThat(proxy.openConnections()).isEqualTo(1);
      proxy.heal();
      s.setSoTimeout(5_000);
      assertThat(s.getInputStream().read()).as("the held byte, after healing").isEqualTo('b');
    }
  }

  @Test
  void resetAllResetsEveryOpenConnection() throws IOException {
    try (Socket a = connect();
        Socket b = connect()) {
      roundTrip(a, "x");
      roundTrip(b, "y");
      assertThat(proxy.resetAll()).isEqualTo(2);
      assertThatThrownBy(
              () -> {
                a.getOutputStream().write('z');
                a.getInputStream().read();
                a.getOutputStream().write('z');
              })
          .isInstanceOf(SocketException.class);
      assertThat(proxy.resets()).isEqualTo(2);
    }
    try (Socket c = connect()) {
      assertThat(roundTrip(c, "again")).as("new connections work").isEqualTo("again");
    }
  }

  @Test
  void aMarkedRequestReachesTheServerButItsAnswerIsLost() throws IOException {
    try (Socket other = connect();
        Socket armed = connect()) {
      proxy.resetAfterReplyTo("INSERT", "COMMIT");
      assertThat(roundTrip(other, "COMMIT")).as("a connection not armed").isEqualTo("COMMIT");
      assertThat(roundTrip(armed, "INSERT")).isEqualTo("INSERT");
      armed.getOutputStream().write("COMMIT".getBytes(StandardCharsets.UTF_8));
      assertThatThrownBy(() -> armed.getInputStream().read()).isInstanceOf(SocketException.class);
      assertThat(proxy.resets()).isEqualTo(1);
    }
  }

  @Test
  void latencyAndBandwidthSlowEachChunk() throws IOException {
    try (Socket s = connect()) {
      roundTrip(s, "warm");
      proxy.latency(Duration.ofMillis(100));
      long t0 = System.nanoTime();
      roundTrip(s, "ping");
      long took = (System.nanoTime() - t0) / 1_000_000;
      assertThat(took).as("two chunks of 100 ms each").isGreaterThanOrEqualTo(200);
      proxy.heal();
      proxy.bandwidth(10_000);
      t0 = System.nanoTime();
      roundTrip(s, "x".repeat(2_000));
      took = (System.nanoTime() - t0) / 1_000_000;
      assertThat(took).as("2,000 bytes each way at 10,000 bytes/s").isGreaterThanOrEqualTo(350);
    }
  }
}
