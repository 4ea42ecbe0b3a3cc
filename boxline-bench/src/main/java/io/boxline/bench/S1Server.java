package io.boxline.bench;

import static io.boxline.bench.Bench.log;
import static io.boxline.bench.BenchFailure.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.Event;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.server.BoxlineServer;
import io.boxline.server.ServerConfig;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * S1, the server's HTTP paths against the in-process Java paths of the same Boxline instance, in
 * one run: publish throughput (4 producers; one event per transaction, then 50), and end-to-end
 * latency at a paced rate — Java: {@code inTransaction} called to the handler entered; HTTP: the
 * POST sent to the event read from a tail stream (server-sent events) in another thread.
 */
final class S1Server {
  private S1Server() {}

  private static final Workload.Definition DEF = Workload.define("s1", Bench.Suite.SERVER);

  static final Opt<Integer> EVENTS = DEF.integer("events", 20_000, "events per throughput trial");
  static final Opt<Integer> PRODUCERS = DEF.integer("producers", 4, "producer threads");
  static final Opt<String> RATES =
      DEF.text("rates", "200,1000", "paced rates for latency, events/s");
  static final Opt<Integer> SECONDS = DEF.integer("seconds", 10, "seconds per latency trial");
  static final Opt<Boolean> PUBLISH =
      DEF.flag("publish", true, "run the publish throughput trials before the latency trials");
  static final Opt<String> PATHS =
      DEF.text(
          "paths",
          "java,jmember,tail,member,other,notify",
          "latency paths: java, jmember, tail, member, other (member on a second server), othertail"
              + " (tail on the second server), otherjava (Java consumer of the second server),"
              + " notify (PostgreSQL's own NOTIFY to a LISTEN connection: the floor of every"
              + " wake-up across instances)");

  static final Workload WORKLOAD =
      DEF.runs(
          "the server's HTTP publish and tail against the in-process Java paths", S1Server::run);

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  static String run(Run run) throws Exception {
    Options o = run.o();
    StringBuilder out = new StringBuilder("## S1 — the server's HTTP paths against Java\n\n");
    {
      ServerConfig config =
          ServerConfig.parse(
              "http: {port: 0, threads: 32}\nauth: {disabled: true}\n"
                  + "database: {url: '"
                  + run.db().url
                  + "', user: '"
                  + run.db().user
                  + "', password: '"
                  + run.db().password
                  + "', schema: "
                  + run.schema()
                  + ", poolSize: 32}\n",
              "s1",
              Map.of());
      try (BoxlineServer server = BoxlineServer.start(config)) {
        Boxline boxline = server.boxline();
        String base = server.baseUrl();
        // A second server on the same database, which does not lead the sequencer: a member waiting
        // there hears of new events through the database (LISTEN/NOTIFY).
        long leadBy = System.nanoTime() + 30_000_000_000L;
        while (!boxline.stats().sequencerLeader()) {
          check(System.nanoTime() < leadBy, "S1: the first server did not lead the sequencer");
          Thread.sleep(50);
        }
        BoxlineServer other = BoxlineServer.start(config);
        String otherBase = other.baseUrl();
        try {
          out.append(
              String.format(
                  Locale.ROOT,
                  "One server process (in the bench JVM, auth off, pool of 32) on PostgreSQL; %d"
                      + " producers; topics of 16 partitions; 200-byte JSON payloads. Java publishes"
                      + " through the same Boxline instance the server runs.%n%n",
                  o.get(PRODUCERS)));
          Table publish =
              new Table("path", "events per transaction", "events", "seconds", "events/s");
          int trial = 0;
          for (int perTx : o.get(PUBLISH) ? new int[] {1, 50} : new int[0]) {
            // Batches of 50 go ten times as fast: ten times the events, so a trial lasts seconds.
            int events = perTx == 1 ? o.get(EVENTS) : o.get(EVENTS) * 10;
            for (String client : List.of("java", "jdk", "lean")) {
              TopicName t = topic(boxline, "s1-tp-" + trial++);
              double s = publishTrial(boxline, base, t, events, o.get(PRODUCERS), perTx, client);
              String label =
                  switch (client) {
                    case "java" -> "Java inTransaction";
                    case "jdk" -> "HTTP POST, JDK HttpClient";
                    default -> "HTTP POST, keep-alive socket client";
                  };
              log("S1 publish %s, %d per transaction: %.0f events/s", label, perTx, events / s);
              publish.row(label, perTx, events, Stats.f("%.2f", s), Stats.f("%,.0f", events / s));
            }
          }
          out.append(publish).append('\n');
          // The publish trials wrote a lot of WAL: its checkpoint runs now, not in the middle of
          // the latency trials (one took a p99 of a second when it did).
          try (java.sql.Connection c =
                  java.sql.DriverManager.getConnection(
                      run.db().url, run.db().user, run.db().password);
              java.sql.Statement st = c.createStatement()) {
            st.execute("CHECKPOINT");
          }
          // And the vacuum of what they wrote (Boxline's retention loop) ends before them: the
          // first
          // latency trial took a p99 of over a second while it ran.
          String settled = Noise.awaitQuiet(60, 20);
          if (!settled.isEmpty()) {
            log("S1: %s before the latency trials", settled);
          }
          Table latency = new Table("path", "rate/s", "events", "p50 ms", "p99 ms", "max ms");
          for (String r : o.get(RATES).split(",")) {
            int rate = Integer.parseInt(r.trim());
            for (String path : o.get(PATHS).split(",")) {
              TopicName t = topic(boxline, "s1-lat-" + trial++);
              double[] ms =
                  switch (path) {
                    case "java" -> javaLatency(boxline, boxline, t, rate, o.get(SECONDS));
                    case "tail" -> httpLatency(boxline, base, base, t, rate, o.get(SECONDS));
                    case "jmember" -> memberLatency(boxline, null, base, t, rate, o.get(SECONDS));
                    case "member" -> memberLatency(boxline, base, base, t, rate, o.get(SECONDS));
                    case "othertail" ->
                        httpLatency(boxline, base, otherBase, t, rate, o.get(SECONDS));
                    case "otherjava" ->
                        javaLatency(boxline, other.boxline(), t, rate, o.get(SECONDS));
                    case "other" ->
                        memberLatency(boxline, base, otherBase, t, rate, o.get(SECONDS));
                    case "notify" -> notifyLatency(run.db(), rate, o.get(SECONDS));
                    default -> throw new IllegalArgumentException("S1: no latency path " + path);
                  };
              Arrays.sort(ms);
              String label =
                  switch (path) {
                    case "java" -> "Java inTransaction → handler";
                    case "tail" -> "HTTP POST → tail stream";
                    case "jmember" -> "Java inTransaction → HTTP group member";
                    case "member" -> "HTTP POST → HTTP group member (fetch)";
                    case "othertail" -> "HTTP POST → tail stream on another server";
                    case "otherjava" -> "Java inTransaction → handler on another server";
                    case "notify" -> "PostgreSQL NOTIFY committed → LISTEN connection";
                    default -> "HTTP POST → HTTP group member on another server";
                  };
              log(
                  "S1 latency %s at %d/s: p50 %.2f ms, p99 %.2f ms",
                  label, rate, pct(ms, 50), pct(ms, 99));
              latency.row(
                  label,
                  rate,
                  ms.length,
                  Stats.f("%.2f", pct(ms, 50)),
                  Stats.f("%.2f", pct(ms, 99)),
                  Stats.f("%.2f", ms[ms.length - 1]));
            }
          }
          out.append(latency);
          TopicName probed = topic(boxline, "s1-hostile");
          out.append(
              S1Hostile.probe(
                  base,
                  "/v1/topics/" + probed.toString().replace("/", "%2F") + "/events",
                  new int[] {0, 64, 256, 1024},
                  50));
        } finally {
          other.close();
        }
      }
    }
    return out.toString();
  }

  private static TopicName topic(Boxline boxline, String name) {
    TopicName t = TopicName.of("bench", name);
    boxline.admin().createNamespace(t.namespace());
    boxline.admin().createTopic(t, 16);
    return t;
  }

  private static String payload(long stamp) {
    return "{\"stamp\":" + stamp + ",\"pad\":\"" + "x".repeat(160) + "\"}";
  }

  private static double publishTrial(
      Boxline boxline,
      String base,
      TopicName t,
      int events,
      int producers,
      int perTx,
      String client)
      throws Exception {
    AtomicInteger next = new AtomicInteger();
    long t0 = System.nanoTime();
    Workers workers = new Workers();
    String url = topicUrl(base, t);
    String path = url.substring(base.length());
    workers
        .start(
            producers,
            p -> {
              KeepAlivePost lean = client.equals("lean") ? new KeepAlivePost(base) : null;
              int from;
              while ((from = next.getAndAdd(perTx)) < events) {
                int n = Math.min(perTx, events - from);
                if (!client.equals("java")) {
                  StringBuilder b = new StringBuilder("{\"events\":[");
                  for (int i = 0; i < n; i++) {
                    b.append(i == 0 ? "" : ",").append(httpEvent(from + i, 0));
                  }
                  String body = b.append("]}").toString();
                  int status = lean != null ? lean.post(path, body) : post(url, body).statusCode();
                  check(status == 200, "S1: HTTP publish answered " + status);
                } else {
                  List<Object> batch = new ArrayList<>();
                  for (int i = 0; i < n; i++) {
                    batch.add(javaEvent(t, from + i, 0));
                  }
                  boxline.inTransaction(tx -> boxline.publisher().publishAll(tx, batch));
                }
              }
              if (lean != null) {
                lean.close();
              }
            })
        .join();
    return (System.nanoTime() - t0) / 1e9;
  }

  private static String topicUrl(String base, TopicName t) {
    return base
        + "/v1/topics/"
        + URLEncoder.encode(t.toString(), StandardCharsets.UTF_8)
        + "/events";
  }

  private static OutgoingEvent javaEvent(TopicName t, int i, long stamp) {
    return OutgoingEvent.builder(t)
        .key("k-" + i)
        .type("s1")
        .contentType("application/json")
        .payload(payload(stamp).getBytes(StandardCharsets.UTF_8))
        .build();
  }

  private static String httpEvent(int i, long stamp) {
    return "{\"key\":\"k-" + i + "\",\"type\":\"s1\",\"payload\":" + payload(stamp) + "}";
  }

  /** Publishes with {@code boxline}; {@code consuming} (the same or another instance) handles. */
  private static double[] javaLatency(
      Boxline boxline, Boxline consuming, TopicName t, int rate, int seconds) throws Exception {
    boxline.admin().createSubscription(SubscriptionSpec.of(t.name(), t));
    int n = rate * seconds;
    double[] ms = new double[n];
    CountDownLatch all = new CountDownLatch(n);
    AtomicInteger seen = new AtomicInteger();
    try (Consumer c =
        consuming
            .consumer(t.name())
            .handler(
                (Event e) -> {
                  long now = System.nanoTime();
                  int i = Integer.parseInt(e.key().substring(2));
                  ms[i] = (now - stampOf(e.payload())) / 1e6;
                  seen.incrementAndGet();
                  all.countDown();
                })
            .start()) {
      Pacer.run(
          n,
          rate,
          4,
          (k, late) -> {
            OutgoingEvent e = javaEvent(t, k, System.nanoTime());
            boxline.inTransaction(tx -> boxline.publisher().publish(tx, e));
          });
      check(
          all.await(60, java.util.concurrent.TimeUnit.SECONDS),
          "S1: Java consumer got " + seen.get() + " of " + n);
    }
    return ms;
  }

  /**
   * PostgreSQL's own signal at the same pace: {@code pg_notify} in its own transaction (stamped
   * before it is sent) to the moment a connection that LISTENs receives it. Every wake-up of a
   * waiter on another instance rides on this, so it bounds what the cross-instance paths can do.
   */
  private static double[] notifyLatency(Db db, int rate, int seconds) throws Exception {
    int n = rate * seconds;
    double[] ms = new double[n];
    long[] sent = new long[n];
    CountDownLatch all = new CountDownLatch(n);
    String channel = "s1_notify_" + Long.toHexString(System.nanoTime());
    try (java.sql.Connection listen =
        java.sql.DriverManager.getConnection(db.url, db.user, db.password)) {
      try (java.sql.Statement st = listen.createStatement()) {
        st.execute("LISTEN " + channel);
      }
      org.postgresql.PGConnection pg = listen.unwrap(org.postgresql.PGConnection.class);
      Thread listener =
          new Thread(
              () -> {
                try {
                  while (all.getCount() > 0) {
                    org.postgresql.PGNotification[] got = pg.getNotifications(500);
                    long now = System.nanoTime();
                    for (org.postgresql.PGNotification note : got == null ? NO_NOTES : got) {
                      int i = Integer.parseInt(note.getParameter());
                      ms[i] = (now - sent[i]) / 1e6;
                      all.countDown();
                    }
                  }
                } catch (java.sql.SQLException e) {
                  log("S1 notify listener failed: %s", e);
                }
              },
              "s1-listen");
      listener.start();
      List<java.sql.Connection> opened = new java.util.concurrent.CopyOnWriteArrayList<>();
      ThreadLocal<java.sql.PreparedStatement> notify =
          ThreadLocal.withInitial(
              () -> {
                try {
                  java.sql.Connection c =
                      java.sql.DriverManager.getConnection(db.url, db.user, db.password);
                  opened.add(c);
                  return c.prepareStatement("SELECT pg_notify('" + channel + "', ?)");
                } catch (java.sql.SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      try {
        Pacer.run(
            n,
            rate,
            4,
            (i, late) -> {
              java.sql.PreparedStatement ps = notify.get();
              ps.setString(1, Integer.toString(i));
              sent[i] = System.nanoTime();
              ps.execute();
            });
        check(
            all.await(60, java.util.concurrent.TimeUnit.SECONDS),
            "S1: the LISTEN connection heard " + (n - all.getCount()) + " of " + n);
      } finally {
        for (java.sql.Connection c : opened) {
          c.close();
        }
        listener.join(5_000);
      }
    }
    return ms;
  }

  private static final org.postgresql.PGNotification[] NO_NOTES = {};

  /** POSTs to {@code base} while a tail of {@code tailBase} (the same or another server) reads. */
  private static double[] httpLatency(
      Boxline boxline, String base, String tailBase, TopicName t, int rate, int seconds)
      throws Exception {
    int n = rate * seconds;
    double[] ms = new double[n];
    CountDownLatch all = new CountDownLatch(n);
    CountDownLatch open = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () -> {
              try {
                HttpRequest req =
                    HttpRequest.newBuilder(
                            URI.create(
                                topicUrl(tailBase, t).replace("/events", "/tail?from=earliest")))
                        .build();
                // Closing the stream closes the connection, which ends the tail on the server.
                try (var body = HTTP.send(req, HttpResponse.BodyHandlers.ofLines()).body()) {
                  var lines = body.iterator();
                  open.countDown();
                  while (all.getCount() > 0 && lines.hasNext()) {
                    String line = lines.next();
                    if (line.startsWith("data: ")) {
                      long now = System.nanoTime();
                      JsonNode e = JSON.readTree(line.substring(6));
                      int i = Integer.parseInt(e.get("key").asText().substring(2));
                      ms[i] = (now - e.get("payload").get("stamp").asLong()) / 1e6;
                      all.countDown();
                    }
                  }
                }
              } catch (Exception e) {
                open.countDown();
                log("S1 tail failed: %s", e);
              }
            },
            "s1-tail");
    reader.start();
    check(open.await(10, java.util.concurrent.TimeUnit.SECONDS), "S1: tail did not open");
    postPaced(base, t, n, rate);
    check(
        all.await(60, java.util.concurrent.TimeUnit.SECONDS),
        "S1: tail got " + (n - all.getCount()) + " of " + n);
    reader.join(5_000);
    return ms;
  }

  /**
   * POSTs at the rate (or, when {@code base} is null, publishes with Java's {@code inTransaction},
   * as the Java consumer's trial does) while one HTTP member fetches (long poll) and settles what
   * it got within its next fetch, one request per batch, on a lean keep-alive connection.
   */
  private static double[] memberLatency(
      Boxline boxline, String base, String memberBase, TopicName t, int rate, int seconds)
      throws Exception {
    boxline.admin().createSubscription(SubscriptionSpec.of(t.name(), t));
    int n = rate * seconds;
    double[] ms = new double[n];
    CountDownLatch all = new CountDownLatch(n);
    String fetch =
        "/v1/subscriptions/"
            + URLEncoder.encode(t.name(), StandardCharsets.UTF_8)
            + "/members/s1/fetch";
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    Thread fetcher =
        new Thread(
            () -> {
              try (KeepAlivePost client = new KeepAlivePost(memberBase)) {
                StringBuilder settle = new StringBuilder();
                while (all.getCount() > 0) {
                  String body =
                      "{\"max\":500,\"waitMillis\":1000"
                          + (settle.length() > 0 ? ",\"settle\":[" + settle + "]" : "")
                          + "}";
                  KeepAlivePost.Answer r = client.call(fetch, body);
                  long now = System.nanoTime();
                  check(r.status() == 200, "S1: fetch answered " + r.status() + " " + r.body());
                  settle.setLength(0);
                  JsonNode events = JSON.readTree(r.body()).get("events");
                  for (JsonNode d : events) {
                    JsonNode e = d.get("event");
                    int i = Integer.parseInt(e.get("key").asText().substring(2));
                    if (ms[i] == 0) {
                      ms[i] = (now - e.get("payload").get("stamp").asLong()) / 1e6;
                      all.countDown();
                    }
                    settle
                        .append(settle.length() > 0 ? "," : "")
                        .append("{\"ackId\":\"")
                        .append(d.get("ackId").asText())
                        .append("\",\"outcome\":\"done\"}");
                  }
                }
              } catch (Throwable e) {
                errors.add(e);
              }
            },
            "s1-member");
    fetcher.start();
    if (base == null) {
      Pacer.run(
          n,
          rate,
          4,
          (k, late) -> {
            OutgoingEvent e = javaEvent(t, k, System.nanoTime());
            boxline.inTransaction(tx -> boxline.publisher().publish(tx, e));
          });
    } else {
      postPaced(base, t, n, rate);
    }
    boolean done = all.await(60, java.util.concurrent.TimeUnit.SECONDS);
    fetcher.join(5_000);
    check(errors.isEmpty(), "S1 member failed: " + errors);
    check(done, "S1: the HTTP member got " + (n - all.getCount()) + " of " + n);
    return ms;
  }

  /** POSTs {@code n} events at {@code rate}/s, event i keyed k-i and stamped when sent. */
  private static void postPaced(String base, TopicName t, int n, int rate) throws Exception {
    // The lean client, a connection per sender, as the publish trials' "keep-alive" client: with
    // the JDK's HttpClient its own CPU at 1,000 requests a second would be in every HTTP latency.
    String path = topicUrl(base, t).substring(base.length());
    List<KeepAlivePost> opened = new java.util.concurrent.CopyOnWriteArrayList<>();
    ThreadLocal<KeepAlivePost> client =
        ThreadLocal.withInitial(
            () -> {
              try {
                KeepAlivePost c = new KeepAlivePost(base);
                opened.add(c);
                return c;
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    try {
      Pacer.run(
          n,
          rate,
          4,
          (i, late) -> {
            int status = client.get().post(path, httpEvent(i, System.nanoTime()));
            check(status == 200, "S1: HTTP publish answered " + status);
          });
    } finally {
      for (KeepAlivePost c : opened) {
        c.close();
      }
    }
  }

  private static HttpResponse<String> post(String url, String body) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static long stampOf(byte[] payload) {
    String s = new String(payload, StandardCharsets.UTF_8);
    int at = s.indexOf("\"stamp\":") + 8;
    return Long.parseLong(s.substring(at, s.indexOf(',', at)));
  }

  private static double pct(double[] sorted, int p) {
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
  }
}
