package io.boxline.rabbitmq;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.boxline.testkit.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The machine's RabbitMQ on 127.0.0.1:5672 (guest/guest), managed with {@code rabbitmqctl}. When it
 * is not running the tests start it with {@code rabbitmq-server -detached}; when that does not work
 * they fail saying how to start it. They never skip.
 */
final class RabbitBroker {
  static final String HOST = "127.0.0.1";
  static final int PORT = 5672;
  private static final Duration START_WAIT = Duration.ofSeconds(90);

  private RabbitBroker() {}

  /** Makes sure the broker answers, starting it when it does not. */
  static synchronized void ensureRunning() {
    if (reachable("/")) {
      return;
    }
    String started;
    try {
      started = run("rabbitmq-server", "-detached");
    } catch (IOException e) {
      started = e.toString();
    }
    try {
      Await.until(START_WAIT, "RabbitMQ on " + HOST + ":" + PORT, () -> reachable("/"));
    } catch (AssertionError e) {
      throw new AssertionError(
          "RabbitMQ does not answer on "
              + HOST
              + ":"
              + PORT
              + " (guest/guest) and `rabbitmq-server -detached` did not bring it up ("
              + started
              + "). Start it with `rabbitmq-server -detached` (or `service rabbitmq-server"
              + " start`) and run the tests again.");
    }
  }

  static boolean reachable(String vhost) {
    ConnectionFactory f = factory(vhost);
    f.setConnectionTimeout(1000);
    f.setHandshakeTimeout(2000);
    try (Connection c = f.newConnection("boxline-test-probe")) {
      return c.isOpen();
    } catch (Exception e) {
      return false;
    }
  }

  static ConnectionFactory factory(String vhost) {
    ConnectionFactory f = new ConnectionFactory();
    f.setHost(HOST);
    f.setPort(PORT);
    f.setUsername("guest");
    f.setPassword("guest");
    f.setVirtualHost(vhost);
    f.setAutomaticRecoveryEnabled(false);
    return f;
  }

  static String uri(String vhost) {
    return "amqp://guest:guest@" + HOST + ":" + PORT + "/" + vhost.replace("/", "%2F");
  }

  /** A fresh vhost the guest user may use. */
  static String createVhost() throws IOException {
    String name = "boxline-test-" + UUID.randomUUID().toString().substring(0, 8);
    run("rabbitmqctl", "add_vhost", name);
    run("rabbitmqctl", "set_permissions", "-p", name, "guest", ".*", ".*", ".*");
    return name;
  }

  static void deleteVhost(String name) throws IOException {
    run("rabbitmqctl", "delete_vhost", name);
  }

  /** Stops the RabbitMQ application (the Erlang node keeps running): a broker outage. */
  static void stopApp() throws IOException {
    run("rabbitmqctl", "stop_app");
  }

  /** Starts the application again and waits until {@code vhost} accepts connections. */
  static void startApp(String vhost) throws IOException {
    run("rabbitmqctl", "start_app");
    Await.until(START_WAIT, "RabbitMQ back after start_app", () -> reachable(vhost));
  }

  /** Runs a command, returns its output; fails when it exits non-zero or hangs. */
  static String run(String... command) throws IOException {
    Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
    try {
      if (!p.waitFor(2, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", command) + " did not finish within 2 minutes");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted running " + String.join(" ", command), e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (p.exitValue() != 0) {
      throw new IOException(
          String.join(" ", command) + " exited with " + p.exitValue() + ": " + out);
    }
    return out;
  }
}
