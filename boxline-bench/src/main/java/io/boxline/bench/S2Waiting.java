package io.boxline.bench;

import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * S2: what waiting HTTP clients cost one server. The server runs in a JVM of its own on a database
 * of its own; the bench measures {@code /health/ready} and one-event publishes (sequential, p50 and
 * p99), the database's transactions per second and the server's heap after a full GC, first idle
 * and then while {@code members} group members wait in long polls and {@code tails} tail streams
 * stay open, both on a topic nobody publishes to.
 */
final class S2Waiting {
  private S2Waiting() {}

  private static final Workload.Definition DEF = Workload.define("s2", Bench.Suite.SERVER);

  static final Opt<Integer> MEMBERS = DEF.integer("members", 1000, "waiting group members");
  static final Opt<Integer> TAILS = DEF.integer("tails", 200, "open tail streams");
  static final Opt<Integer> CALLS = DEF.integer("calls", 300, "health checks and publishes each");
  static final Opt<Integer> SECONDS =
      DEF.integer("seconds", 30, "seconds over which transactions are counted");
  static final Opt<Integer> SETTLE =
      DEF.integer(
          "settle",
          45,
          "seconds the waiting clients wait before the count (the group settles after the joins)");

  static final Workload WORKLOAD =
      DEF.runs("waiting members and tails against health and publish latency", S2Waiting::run);

  private static final String TOKEN = "s2-bench-token-0123456789";
  private static final AtomicInteger overloaded = new AtomicInteger();

  static String run(Run run) throws Exception {
    overloaded.set(0); // a count per run, for `Bench all` runs several
    Options o = run.o();
    String db = "bx_s2_" + ProcessHandle.current().pid();
    String admin = run.db().url.replaceAll("/[^/?]*(\\?.*)?$", "/postgres");
    sql(admin, run, "CREATE DATABASE " + db);
    String url = run.db().url.replaceAll("/[^/?]*(\\?.*)?$", "/" + db);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path dir = Files.createTempDirectory("boxline-s2");
    Path config = dir.resolve("boxline.yaml");
    Files.writeString(
        config,
        "http: {port: "
            + port
            + ", maxStreams: 10000, maxConnections: 10000}\n"
            + "database: {url: '"
            + url
            + "', user: '"
            + run.db().user
            + "', password: '"
            + run.db().password
            + "'}\n"
            + "tokens: [{name: bench, secret: "
            + TOKEN
            + ", role: admin, namespaces: ['*']}]\n"
            + "topics: [{name: s2/quiet, partitions: 16}, {name: s2/busy, partitions: 16}]\n"
            + "subscriptions: [{name: s2-quiet, topics: [s2/quiet]}]\n");
    Process server =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                "io.boxline.server.BoxlineServer",
                "--config",
                config.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("server.log").toFile())
            .start();
    String base = "http://127.0.0.1:" + port;
    HttpClient probe = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpClient waiters = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<InputStream> tails = new ConcurrentLinkedQueue<>();
    try {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (!ready(probe, base)) {
        if (System.nanoTime() > deadline || !server.isAlive()) {
          throw new BenchFailure("the server did not start; see " + dir.resolve("server.log"));
        }
        Thread.sleep(100);
      }
      StringBuilder out = new StringBuilder("## S2 — waiting clients on one server\n\n");
      out.append(
          String.format(
              Locale.ROOT,
              "The server in a JVM of its own (defaults: 32 threads, pool of 16) on a PostgreSQL"
                  + " database of its own; %d group members of one subscription each in a 30-s"
                  + " long poll, repeated when it ends, and %d tail streams, all on a topic nobody"
                  + " publishes to; %d sequential `/health/ready` and %d one-event publishes to"
                  + " another topic, alternating; database transactions counted over %d s.%n%n",
              o.get(MEMBERS),
              o.get(TAILS),
              o.get(CALLS),
              o.get(CALLS),
              o.get(SECONDS)));
      Table table =
          new Table(
              "clients waiting",
              "health p50 / p99 ms",
              "publish p50 / p99 ms",
              "database xacts/s",
              "member fetches/s",
              "members renewed/s",
              "heap after GC MiB",
              "server threads");
      measure(probe, base, o, url, run, server, table, "none");

      AtomicInteger waiting = new AtomicInteger();
      for (int i = 0; i < o.get(MEMBERS); i++) {
        poll(waiters, base, "m" + i, stop, waiting);
      }
      int wanted = o.get(TAILS);
      for (int attempt = 0; tails.size() < wanted; attempt++) {
        if (attempt > 30) {
          throw new BenchFailure("only " + tails.size() + " tails opened; the rest got 503");
        }
        if (attempt > 0) {
          Thread.sleep(1000); // Retry-After
        }
        List<CompletableFuture<HttpResponse<InputStream>>> opened = new ArrayList<>();
        for (int i = tails.size(); i < wanted; i++) {
          opened.add(
              waiters.sendAsync(
                  get(base + "/v1/topics/s2%2Fquiet/tail").build(),
                  HttpResponse.BodyHandlers.ofInputStream()));
        }
        for (CompletableFuture<HttpResponse<InputStream>> f : opened) {
          HttpResponse<InputStream> r = f.get();
          if (r.statusCode() == 200) {
            tails.add(r.body());
          } else if (r.statusCode() == 503) {
            overloaded.incrementAndGet();
          } else {
            throw new BenchFailure("a tail got " + r.statusCode());
          }
        }
      }
      deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      while (gauge(probe, base, "boxline_http_fetches_waiting") < o.get(MEMBERS) * 0.95) {
        if (System.nanoTime() > deadline) {
          throw new BenchFailure(
              "only "
                  + gauge(probe, base, "boxline_http_fetches_waiting")
                  + " long polls wait; see "
                  + dir.resolve("server.log"));
        }
        Thread.sleep(200);
      }
      Bench.log(
          "S2: %d long polls and %d tails open; waiting %d s for the group to settle",
          (int) gauge(probe, base, "boxline_http_fetches_waiting"), tails.size(), o.get(SETTLE));
      // Each member joined with a group of its own size at the time; until each has checked in
      // once with the whole group there, the group looks changed and is not renewed together.
      Thread.sleep(o.get(SETTLE) * 1000L);
      measure(
          probe,
          base,
          o,
          url,
          run,
          server,
          table,
          String.format(Locale.ROOT, "%,d members + %,d tails", o.get(MEMBERS), o.get(TAILS)));
      out.append(table).append('\n');
      out.append(
          String.format(
              Locale.ROOT,
              "While they connected, %d requests were answered 503 `overloaded` and retried after"
                  + " a second.%n%n",
              overloaded.get()));
      out.append("Server log: ").append(dir.resolve("server.log")).append('\n');
      return out.toString();
    } finally {
      stop.set(true);
      for (InputStream s : tails) {
        try {
          s.close();
        } catch (Exception ignored) {
          // closing the client's side only
        }
      }
      server.destroy();
      server.waitFor();
      sql(admin, run, "DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
    }
  }

  private static void poll(
      HttpClient client, String base, String member, AtomicBoolean stop, AtomicInteger waiting) {
    if (stop.get()) {
      return;
    }
    client
        .sendAsync(
            post(
                    base + "/v1/subscriptions/s2-quiet/members/" + member + "/fetch",
                    "{\"waitMillis\":30000}")
                .timeout(Duration.ofSeconds(60))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .whenComplete(
            (r, e) -> {
              if (e == null && r.statusCode() == 503) {
                // Overloaded (too many requests at once): back off as Retry-After says.
                overloaded.incrementAndGet();
                CompletableFuture.delayedExecutor(1, java.util.concurrent.TimeUnit.SECONDS)
                    .execute(() -> poll(client, base, member, stop, waiting));
              } else {
                poll(client, base, member, stop, waiting);
              }
            });
  }

  private static void measure(
      HttpClient client,
      String base,
      Options o,
      String url,
      Run run,
      Process server,
      Table table,
      String label)
      throws Exception {
    int n = o.get(CALLS);
    long[] health = new long[n];
    long[] publish = new long[n];
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      HttpResponse<String> h =
          client.send(get(base + "/health/ready").build(), HttpResponse.BodyHandlers.ofString());
      health[i] = System.nanoTime() - t0;
      t0 = System.nanoTime();
      HttpResponse<String> p =
          client.send(
              post(
                      base + "/v1/topics/s2%2Fbusy/events",
                      "{\"type\":\"T\",\"key\":\"k" + i + "\",\"payload\":{\"n\":" + i + "}}")
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      publish[i] = System.nanoTime() - t0;
      if (h.statusCode() != 200 || p.statusCode() != 200) {
        throw new BenchFailure("health " + h.statusCode() + ", publish " + p.statusCode());
      }
    }
    Arrays.sort(health);
    Arrays.sort(publish);
    // PostgreSQL counts a session's transactions when it reports them, up to 10 s after they ran
    // for an idle one: the publishes above would be counted in the window otherwise.
    Thread.sleep(11_000);
    double fetches = gauge(client, base, "boxline_http_member_fetches_total");
    double renewed = gauge(client, base, "boxline_http_members_renewed_total");
    long a = xacts(url, run);
    Thread.sleep(o.get(SECONDS) * 1000L);
    long b = xacts(url, run);
    double perSecond = (b - a) / (double) o.get(SECONDS);
    fetches = (gauge(client, base, "boxline_http_member_fetches_total") - fetches) / o.get(SECONDS);
    renewed =
        (gauge(client, base, "boxline_http_members_renewed_total") - renewed) / o.get(SECONDS);
    new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
            Long.toString(server.pid()),
            "GC.run")
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start()
        .waitFor();
    double heap = gauge(client, base, "jvm_memory_used_bytes{area=\"heap\"") / (1024.0 * 1024);
    double threads = gauge(client, base, "jvm_threads_live_threads");
    Bench.log(
        "S2 %s: health %s, publish %s, %.1f xacts/s, %.1f member fetches/s, %.1f renewed/s,"
            + " heap %.1f MiB, %d threads",
        label,
        Stats.p50p99(health),
        Stats.p50p99(publish),
        perSecond,
        fetches,
        renewed,
        heap,
        (long) threads);
    table.row(
        label,
        Stats.p50p99(health),
        Stats.p50p99(publish),
        Stats.f("%.1f", perSecond),
        Stats.f("%.1f", fetches),
        Stats.f("%.1f", renewed),
        Stats.f("%.1f", heap),
        (long) threads);
  }

  private static HttpRequest.Builder get(String url) {
    return HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + TOKEN);
  }

  private static HttpRequest.Builder post(String url, String body) {
    return HttpRequest.newBuilder(URI.create(url))
        .header("Authorization", "Bearer " + TOKEN)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
  }

  private static boolean ready(HttpClient client, String base) {
    try {
      return client
              .send(
                  HttpRequest.newBuilder(URI.create(base + "/health/ready"))
                      .timeout(Duration.ofSeconds(2))
                      .build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (Exception e) {
      return false;
    }
  }

  /** The sum of a Prometheus metric's samples whose line starts with {@code prefix}. */
  private static double gauge(HttpClient client, String base, String prefix) throws Exception {
    String text =
        client.send(get(base + "/metrics").build(), HttpResponse.BodyHandlers.ofString()).body();
    double sum = 0;
    for (String line : text.split("\n")) {
      if (line.startsWith(prefix)) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  private static long xacts(String url, Run run) throws Exception {
    try (Connection c = DriverManager.getConnection(url, run.db().user, run.db().password);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database"
                    + " WHERE datname = current_database()")) {
      rs.next();
      // This query's own transaction is one of them; the difference of two readings counts one.
      return rs.getLong(1);
    }
  }

  private static void sql(String url, Run run, String statement) throws Exception {
    try (Connection c = DriverManager.getConnection(url, run.db().user, run.db().password);
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }
}
