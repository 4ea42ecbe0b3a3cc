package io.boxline.testkit;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Finds an etcd v3 for tests, in this order: the client URLs in {@code BOXLINE_TEST_ETCD_ENDPOINTS}
 * (comma-separated; every one must answer, or the tests fail); an {@code etcd} binary on the PATH,
 * started as a child process of this JVM on free loopback ports with a temporary data directory
 * (stopped and deleted by a shutdown hook). It never skips: without either it fails and says how to
 * install etcd. One server is shared by every test in the JVM; tests isolate themselves with {@link
 * #newKeyPrefix}.
 */
public final class EtcdServer {
  public static final String ENDPOINTS_VARIABLE = "BOXLINE_TEST_ETCD_ENDPOINTS";
  private static final Duration START_BOUND = Duration.ofSeconds(30);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(3);

  private static EtcdServer shared;
  private static IllegalStateException failure;

  private final List<String> endpoints;
  private final String origin;

  /** Every key prefix handed out in this JVM lies under this one. */
  private final String runPrefix;

  private EtcdServer(List<String> endpoints, String origin) {
    this.endpoints = List.copyOf(endpoints);
    this.origin = origin;
    this.runPrefix = "/boxline-test/" + UUID.randomUUID().toString().substring(0, 8) + "/";
  }

  /** The server shared by every test in this JVM. */
  public static synchronized EtcdServer get() {
    if (shared == null) {
      if (failure != null) {
        throw new IllegalStateException(failure.getMessage(), failure);
      }
      try {
        shared = locate();
      } catch (IllegalStateException e) {
        failure = e; // every later test fails the same way, without trying again
        throw e;
      }
    }
    return shared;
  }

  /** Client URLs, e.g. {@code http://127.0.0.1:41234}. */
  public List<String> endpoints() {
    return endpoints;
  }

  /** Where the server came from, for logs. */
  public String origin() {
    return origin;
  }

  /** A key prefix no other test uses, e.g. {@code /boxline-test/1a2b3c4d/coord-5e6f7a8b/}. */
  public String newKeyPrefix(String hint) {
    String clean = hint.toLowerCase().replaceAll("[^a-z0-9]", "");
    if (clean.length() > 24) {
      clean = clean.substring(0, 24);
    }
    return runPrefix + clean + "-" + UUID.randomUUID().toString().substring(0, 8) + "/";
  }

  private static EtcdServer locate() {
    String env = System.getenv(ENDPOINTS_VARIABLE);
    if (env != null && !env.isBlank()) {
      List<String> urls = new ArrayList<>();
      for (String u : env.split(",")) {
        if (!u.isBlank()) {
          urls.add(u.strip());
        }
      }
      for (String u : urls) {
        String problem = probe(u);
        if (problem != null) {
          // An explicit choice that does not work is an error, not a reason to use something else.
          throw new IllegalStateException(
              ENDPOINTS_VARIABLE
                  + "="
                  + env
                  + ": "
                  + u
                  + " does not answer: "
                  + problem
                  + "; fix or unset it");
        }
      }
      EtcdServer server = new EtcdServer(urls, ENDPOINTS_VARIABLE);
      // A shared cluster outlives the tests: remove what they wrote.
      Runtime.getRuntime()
          .addShutdownHook(new Thread(server::deleteRunKeys, "boxline-test-etcd-cleanup"));
      return server;
    }
    Path binary = findOnPath("etcd");
    if (binary == null) {
      throw new IllegalStateException(
          "no etcd for the tests: "
              + ENDPOINTS_VARIABLE
              + " is not set and there is no etcd binary on the PATH ("
              + System.getenv("PATH")
              + "). Install it with `apt-get install etcd-server` (Debian/Ubuntu), or set "
              + ENDPOINTS_VARIABLE
              + " to the client URL of an etcd 3.4+ server, e.g. http://127.0.0.1:2379.");
    }
    IllegalStateException last = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      try {
        return start(binary);
      } catch (IllegalStateException e) {
        last = e; // most likely a port taken between choosing and binding it: try other ports
      }
    }
    throw last;
  }

  private static EtcdServer start(Path binary) {
    int clientPort = freePort(-1);
    int peerPort = freePort(clientPort);
    String client = "http://127.0.0.1:" + clientPort;
    String peer = "http://127.0.0.1:" + peerPort;
    Path dataDir;
    Path log;
    try {
      dataDir = Files.createTempDirectory("boxline-etcd-");
      log = Files.createTempFile("boxline-etcd-", ".log");
    } catch (IOException e) {
      throw new IllegalStateException("cannot create a data directory for etcd", e);
    }
    List<String> command = command(binary, "boxline-test", dataDir, client, peer);
    Process process = launch(command, log);
    Thread stop =
        new Thread(() -> stop(process, dataDir, log), "boxline-test-etcd-stop-" + clientPort);
    Runtime.getRuntime().addShutdownHook(stop);
    long deadline = System.nanoTime() + START_BOUND.toNanos();
    String problem = "not probed yet";
    long pause = 10;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        Runtime.getRuntime().removeShutdownHook(stop);
        stop(process, dataDir, null);
        throw new IllegalStateException(
            "etcd exited with status "
                + process.exitValue()
                + " while starting on "
                + client
                + "; its log ("
                + log
                + "):\n"
                + tail(log));
      }
      problem = probe(client);
      if (problem == null) {
        return new EtcdServer(List.of(client), binary + " (child process, " + client + ")");
      }
      try {
        Thread.sleep(pause); // polling the child's health endpoint with a bound
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      pause = Math.min(pause * 2, 200);
    }
    Runtime.getRuntime().removeShutdownHook(stop);
    stop(process, dataDir, null);
    throw new IllegalStateException(
        "etcd did not answer on "
            + client
            + " within "
            + START_BOUND
            + " (last problem: "
            + problem
            + "); its log ("
            + log
            + "):\n"
            + tail(log));
  }

  /** Starts etcd with its output going to {@code log}. */
  static Process launch(List<String> command, Path log) {
    try {
      return new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(log.toFile())
          .start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + command.get(0) + ": " + e.getMessage(), e);
    }
  }

  /** A one-member test cluster's command line (no fsync); callers may add flags. */
  static List<String> command(Path binary, String name, Path dataDir, String client, String peer) {
    return new ArrayList<>(
        List.of(
            binary.toString(),
            "--name=" + name,
            "--data-dir=" + dataDir.resolve("data"),
            "--listen-client-urls=" + client,
            "--advertise-client-urls=" + client,
            "--listen-peer-urls=" + peer,
            "--initial-advertise-peer-urls=" + peer,
            "--initial-cluster=" + name + "=" + peer,
            "--initial-cluster-state=new",
            "--unsafe-no-fsync",
            "--logger=zap",
            "--log-outputs=stderr",
            "--log-level=warn"));
  }

  static void stop(Process process, Path dataDir, Path log) {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    deleteTree(dataDir);
    if (log != null) {
      deleteTree(log);
    }
  }

  /** A free loopback port, away from etcd's usual 2379/2380 and the range 35672-35682. */
  static int freePort(int not) {
    for (int i = 0; i < 100; i++) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int p = s.getLocalPort();
        if (p != not && p != 2379 && p != 2380 && (p < 35672 || p > 35682)) {
          return p;
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot find a free loopback port for etcd", e);
      }
    }
    throw new IllegalStateException("cannot find a free loopback port for etcd");
  }

  /** Null when {@code <url>/health} says healthy, else what went wrong. */
  private static String probe(String url) {
    try {
      HttpClient http = HttpClient.newBuilder().connectTimeout(PROBE_TIMEOUT).build();
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(stripSlash(url) + "/health"))
                  .timeout(PROBE_TIMEOUT)
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 200 && r.body().replace(" ", "").contains("\"health\":\"true\"")) {
        return null;
      }
      return "GET /health answered " + r.statusCode() + ": " + r.body().strip();
    } catch (IOException | IllegalArgumentException e) {
      return e.toString();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }

  /** Deletes every key this JVM's tests wrote, through etcd's JSON gateway (bounded). */
  private void deleteRunKeys() {
    byte[] start = runPrefix.getBytes(StandardCharsets.UTF_8);
    byte[] end = start.clone();
    end[end.length - 1]++;
    Base64.Encoder b64 = Base64.getEncoder();
    String body =
        "{\"key\":\""
            + b64.encodeToString(start)
            + "\",\"range_end\":\""
            + b64.encodeToString(end)
            + "\"}";
    try {
      HttpClient.newBuilder()
          .connectTimeout(PROBE_TIMEOUT)
          .build()
          .send(
              HttpRequest.newBuilder(
                      URI.create(stripSlash(endpoints.get(0)) + "/v3/kv/deleterange"))
                  .timeout(PROBE_TIMEOUT)
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.discarding());
    } catch (IOException | RuntimeException e) {
      // best effort while the JVM exits; the keys are under a unique prefix
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String stripSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }

  static Path findOnPath(String name) {
    String path = System.getenv("PATH");
    List<String> dirs = new ArrayList<>();
    if (path != null) {
      dirs.addAll(List.of(path.split(File.pathSeparator)));
    }
    dirs.add("/usr/bin"); // where Debian's etcd-server puts it, should PATH be minimal
    for (String dir : dirs) {
      if (dir.isBlank()) {
        continue;
      }
      Path p = Path.of(dir, name);
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }

  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  private static void deleteTree(Path root) {
    if (root == null || !Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths
          .sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException ignored) {
                  // a temp file left behind is harmless
                }
              });
    } catch (IOException ignored) {
      // as above
    }
  }
}
