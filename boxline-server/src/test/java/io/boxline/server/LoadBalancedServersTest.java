package io.boxline.server;

import static io.boxline.server.Api.enc;
import static io.boxline.server.ServerLifecycleTest.TOKEN;
import static io.boxline.server.ServerLifecycleTest.config;
import static io.boxline.server.ServerLifecycleTest.postgresConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Two server instances on one database behind a real load balancer (HAProxy, round robin): every
 * request of producers and HTTP group members may land on either instance. One instance is killed
 * with SIGKILL mid-traffic: the load balancer takes it out, and nothing acknowledged is lost. A
 * member waiting on one instance is woken by an event published on the other, through the database;
 * the test prints the wake-up latencies.
 */
class LoadBalancedServersTest {
  private static final String TOPIC = "/v1/topics/" + enc("app/orders") + "/events";

  /** Wake-up rounds: 40 in CI; {@code -Dboxline.lb.rounds=500} for the figures. */
  private static final int ROUNDS = Integer.getInteger("boxline.lb.rounds", 40);

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** A call through the load balancer: its 502 and 503 are answers here, not failures. */
  private record Answer(int status, String body) {
    JsonNode json() {
      try {
        return Api.JSON.readTree(body);
      } catch (java.io.IOException e) {
        throw new AssertionError("not JSON (status " + status + "): " + body, e);
      }
    }
  }

  private static Answer post(String base, String path, String body) {
    HttpRequest r =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(40))
            .header("Authorization", "Bearer " + TOKEN)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    try {
      HttpResponse<String> a = CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
      return new Answer(a.statusCode(), a.body());
    } catch (java.io.IOException e) {
      return new Answer(-1, e.toString()); // the connection broke: the outcome is unknown
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** An HTTP group member on a thread of its own: fetches and settles through {@code base}. */
  private static final class Member implements AutoCloseable {
    final Set<String> handled = ConcurrentHashMap.newKeySet();
    final AtomicInteger deliveries = new AtomicInteger();
    final AtomicInteger refused = new AtomicInteger();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread;

    Member(String base, String name) {
      String path = "/v1/subscriptions/lb/members/" + name;
      thread =
          new Thread(
              () -> {
                while (!stop.get()) {
                  Answer f = post(base, path + "/fetch", "{\"max\":50,\"waitMillis\":500}");
                  if (f.status() != 200) {
                    refused.incrementAndGet(); // a server died under the request: ask again
                    continue;
                  }
                  StringBuilder settle = new StringBuilder("{\"settle\":[");
                  int n = 0;
                  for (JsonNode d : f.json().get("events")) {
                    handled.add(d.get("event").get("id").asText());
                    deliveries.incrementAndGet();
                    settle.append(n++ == 0 ? "" : ",");
                    settle
                        .append("{\"ackId\":\"")
                        .append(d.get("ackId").asText())
                        .append("\",\"outcome\":\"done\"}");
                  }
                  if (n > 0) {
                    // 409 (the partition moved) or 502: those events come again.
                    post(base, path + "/settle", settle.append("]}").toString());
                  }
                }
              },
              "lb-member-" + name);
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      stop.set(true);
      thread.join(60_000);
    }
  }

  private static String subscriptionConfig(String schema, String minCheckIn) {
    return postgresConfig(schema)
        + "subscriptions:\n  - {name: lb, topics: [app/orders], groupPolicy: {minCheckInInterval: "
        + minCheckIn
        + "}}\n";
  }

  @Test
  void producersAndMembersThroughALoadBalancerLoseNothingWhenAnInstanceIsKilled() throws Exception {
    String schema = Databases.uniqueName("bx_lb_");
    Path cfg = config(subscriptionConfig(schema, "200ms"));
    try (ServerProcess a = ServerProcess.start(Map.of(), "--config", cfg.toString());
        ServerProcess b = ServerProcess.start(Map.of(), "--config", cfg.toString())) {
      String baseA = a.awaitReady(Duration.ofSeconds(90));
      String baseB = b.awaitReady(Duration.ofSeconds(90));
      try (Haproxy lb = Haproxy.start(List.of(baseA, baseB));
          Member m1 = new Member(lb.base, "m1");
          Member m2 = new Member(lb.base, "m2")) {
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        AtomicInteger unknown = new AtomicInteger();
        AtomicBoolean producing = new AtomicBoolean(true);
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
          int producer = t;
          Thread th =
              new Thread(
                  () -> {
                    for (int i = 0; producing.get(); i++) {
                      Answer r =
                          post(
                              lb.base,
                              TOPIC,
                              "{\"events\":[{\"key\":\"p"
                                  + producer
                                  + "-"
                                  + (i % 5)
                                  + "\",\"type\":\"T\",\"payload\":"
                                  + i
                                  + "}]}");
                      if (r.status() == 200) {
                        r.json()
                            .get("results")
                            .forEach(x -> acknowledged.add(x.get("id").asText()));
                      } else {
                        unknown.incrementAndGet(); // may or may not be in the log
                      }
                    }
                  },
                  "lb-producer-" + t);
          th.start();
          producers.add(th);
        }
        ServerApiTest.await("300 events acknowledged", () -> acknowledged.size() >= 300);
        ServerApiTest.await(
            "both members handling", () -> !m1.handled.isEmpty() && !m2.handled.isEmpty());
        a.kill9();
        int atKill = acknowledged.size();
        ServerApiTest.await(
            "300 more acknowledged through the survivor",
            () -> acknowledged.size() >= atKill + 300);
        producing.set(false);
        for (Thread th : producers) {
          th.join(60_000);
        }
        Set<String> handled = new HashSet<>(m1.handled);
        ServerApiTest.await(
            "every acknowledged event handled by a member",
            () -> {
              handled.addAll(m1.handled);
              handled.addAll(m2.handled);
              return handled.containsAll(acknowledged);
            });
        Api direct = new Api(baseB, TOKEN);
        Map<String, JsonNode> log = direct.allEvents("/v1/topics/" + enc("app/orders"), 4);
        assertThat(log.keySet()).as("acknowledged events in the log").containsAll(acknowledged);
        for (int p = 0; p < 4; p++) {
          int partition = p;
          List<Long> seqs =
              log.values().stream()
                  .filter(e -> e.get("partition").asInt() == partition)
                  .map(e -> e.get("sequence").asLong())
                  .sorted()
                  .toList();
          for (int i = 0; i < seqs.size(); i++) {
            assertThat(seqs.get(i)).as("gap-free partition " + p).isEqualTo(i + 1L);
          }
        }
        int deliveries = m1.deliveries.get() + m2.deliveries.get();
        System.out.printf(
            "load balancer: %d acknowledged (%d answers lost with the killed instance), %d in the"
                + " log, %d deliveries to 2 members (%d repeats), %d fetches answered 502/503%n",
            acknowledged.size(),
            unknown.get(),
            log.size(),
            deliveries,
            deliveries - handled.size(),
            m1.refused.get() + m2.refused.get());
      }
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }

  /**
   * A member's long poll, made through the load balancer, waits on one instance; an event is
   * published on the other. The waiting instance hears of it through the database (NOTIFY), not at
   * the member's next check-in 10 s later.
   */
  @Test
  void aMemberWaitingBehindTheLoadBalancerIsWokenFromTheOtherInstance() throws Exception {
    String schema = Databases.uniqueName("bx_lbw_");
    Path cfg = config(subscriptionConfig(schema, "10s"));
    try (ServerProcess a = ServerProcess.start(Map.of(), "--config", cfg.toString());
        ServerProcess b = ServerProcess.start(Map.of(), "--config", cfg.toString())) {
      Api apiA = new Api(a.awaitReady(Duration.ofSeconds(90)), TOKEN);
      Api apiB = new Api(b.awaitReady(Duration.ofSeconds(90)), TOKEN);
      try (Haproxy lb = Haproxy.start(List.of(apiA.base, apiB.base))) {
        String path = "/v1/subscriptions/lb/members/w";
        assertThat(post(lb.base, path + "/fetch", "{\"waitMillis\":0}").status()).isEqualTo(200);
        List<Long> micros = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
          double waitingA = apiA.metric("boxline_http_fetches_waiting");
          double waitingB = apiB.metric("boxline_http_fetches_waiting");
          CompletableFuture<Answer> poll =
              CompletableFuture.supplyAsync(
                  () -> post(lb.base, path + "/fetch", "{\"waitMillis\":20000}"));
          // Which instance holds the poll: the one whose waiting count went up.
          Api[] holder = new Api[1];
          ServerApiTest.await(
              "the poll waiting on an instance",
              () -> {
                if (apiA.metric("boxline_http_fetches_waiting") > waitingA) {
                  holder[0] = apiA;
                } else if (apiB.metric("boxline_http_fetches_waiting") > waitingB) {
                  holder[0] = apiB;
                }
                return holder[0] != null;
              });
          Api other = holder[0] == apiA ? apiB : apiA;
          long t0 = System.nanoTime();
          assertThat(
                  other
                      .post(TOPIC, "{\"key\":\"k\",\"type\":\"T\",\"payload\":" + round + "}")
                      .status())
              .isEqualTo(200);
          Answer got = poll.get(30, TimeUnit.SECONDS);
          long took = (System.nanoTime() - t0) / 1_000;
          assertThat(got.status()).as(got.body()).isEqualTo(200);
          JsonNode events = got.json().get("events");
          assertThat(events).as("woken with the event, round " + round).hasSize(1);
          assertThat(took)
              .as("woken through the database, not at the check-in 10 s away")
              .isLessThan(5_000_000L);
          micros.add(took);
          Answer settled =
              post(
                  lb.base,
                  path + "/settle",
                  "{\"settle\":[{\"ackId\":\""
                      + events.get(0).get("ackId").asText()
                      + "\",\"outcome\":\"done\"}]}");
          assertThat(settled.status()).as(settled.body()).isEqualTo(200);
        }
        List<Long> sorted = micros.stream().sorted().toList();
        System.out.printf(
            "load balancer: a poll woken from the other instance in p50 %.1f ms, p90 %.1f ms, p99"
                + " %.1f ms, max %.1f ms over %d rounds (publish acknowledged to poll answered)%n",
            sorted.get(sorted.size() / 2) / 1000.0,
            sorted.get((int) (sorted.size() * 0.9)) / 1000.0,
            sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(sorted.size() * 0.99) - 1))
                / 1000.0,
            sorted.get(sorted.size() - 1) / 1000.0,
            sorted.size());
      }
    } finally {
      Databases.dropPostgresSchema(schema);
    }
  }
}
